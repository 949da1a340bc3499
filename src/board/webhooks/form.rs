//! The Webhooks forms as posted, and how they become the service's requests: the
//! create form into a [`CreateWebhook`], the rules form into the rules JSON and a
//! sample delivery. Only the forms' own shapes are checked here (a number, JSON, a
//! header line); everything else is the service's validation.

use serde::Deserialize;

use crate::domain::ids::EndpointId;
use crate::error::{Error, Result};
use crate::intake::trusted_senders::TrustedActors;
use crate::intake::verify::SourceType;
use crate::service::webhooks::CreateWebhook;

/// The create form's fields, as typed (kept to show the form again after a refusal).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct WebhookForm {
    /// The endpoint's id.
    pub endpoint_id: String,
    /// `github`, `gitea`, `stripe`, `standard` or `generic`.
    pub source_type: String,
    /// The default queue.
    pub queue: String,
    /// Attempt cap, as typed (empty: the default).
    pub max_attempts: String,
    /// Trusted sender logins, one per line or comma-separated.
    pub logins: String,
    /// "Trust every sender" ticked.
    pub allow_all: Option<String>,
    /// "Unverified" ticked.
    pub unverified: Option<String>,
}

impl WebhookForm {
    /// The webhook this form asks for.
    pub fn body(&self) -> Result<CreateWebhook> {
        let endpoint_id: EndpointId =
            self.endpoint_id.trim().parse().map_err(|_| Error::invalid("endpoint", "choose one of your endpoints"))?;
        let source_type: SourceType =
            self.source_type.trim().parse().map_err(|_| Error::invalid("source_type", "choose a source type"))?;
        let max_attempts = match self.max_attempts.trim() {
            "" => None,
            raw => Some(raw.parse::<i32>().map_err(|_| Error::invalid("max_attempts", "must be a whole number"))?),
        };
        let logins = self.login_list();
        let trusted_actors = if self.allow_all.is_some() {
            Some(TrustedActors::AllowAll { allow_all: true })
        } else if logins.is_empty() {
            None
        } else {
            Some(TrustedActors::Logins { logins })
        };
        Ok(CreateWebhook {
            endpoint_id,
            source_type,
            queue: self.queue.trim().to_owned(),
            max_attempts,
            trusted_actors,
            secret: None,
            unverified: self.unverified.is_some(),
        })
    }

    /// The logins typed, split on lines and commas, blanks dropped.
    pub fn login_list(&self) -> Vec<String> {
        self.logins.split(['\n', ',']).map(str::trim).filter(|l| !l.is_empty()).map(str::to_owned).collect()
    }
}

/// The rules form: the rules JSON, and the sample delivery of a dry run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct RulesForm {
    /// The rules as JSON (`{"rules": [...]}`).
    pub rules: String,
    /// Sample headers, one `Name: value` per line.
    pub headers: String,
    /// Sample JSON body (empty: none).
    pub body: String,
}

impl RulesForm {
    /// The rules typed, as JSON (to save, or to try; empty means "the saved rules" to
    /// a dry run and is refused by a save).
    pub fn rules_json(&self) -> Result<Option<serde_json::Value>> {
        json_field("rules", &self.rules)
    }

    /// The sample headers: one `Name: value` per line, blank lines skipped.
    pub fn header_list(&self) -> Result<Vec<(String, String)>> {
        let mut out = Vec::new();
        for (n, line) in self.headers.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let (name, value) = line
                .split_once(':')
                .filter(|(name, _)| !name.trim().is_empty())
                .ok_or_else(|| Error::invalid("headers", format!("line {} is not `Name: value`", n + 1)))?;
            out.push((name.trim().to_owned(), value.trim().to_owned()));
        }
        Ok(out)
    }

    /// The sample body, as JSON (empty: no body).
    pub fn body_json(&self) -> Result<Option<serde_json::Value>> {
        json_field("body", &self.body)
    }
}

fn json_field(field: &str, raw: &str) -> Result<Option<serde_json::Value>> {
    if raw.trim().is_empty() {
        return Ok(None);
    }
    let value: serde_json::Value =
        serde_json::from_str(raw).map_err(|e| Error::invalid(field, format!("not valid JSON ({e})")))?;
    // PostgreSQL cannot store U+0000 in jsonb; refuse it here rather than fail later.
    if crate::domain::text::json_has_nul(&value) {
        return Err(Error::invalid(field, "text may not contain NUL (\\u0000) characters"));
    }
    Ok(Some(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_lines_split_at_the_first_colon_and_a_line_without_one_is_refused() {
        let form = RulesForm {
            headers: "X-Event: push\n\n  X-Url: https://a.example/x \nbad line".into(),
            ..Default::default()
        };
        let err = form.header_list().unwrap_err().to_string();
        assert!(err.contains("line 4"), "{err}");
        let form = RulesForm { headers: "X-Event: push\r\nX-Url: https://a.example/x".into(), ..Default::default() };
        assert_eq!(
            form.header_list().unwrap(),
            vec![("X-Event".into(), "push".into()), ("X-Url".into(), "https://a.example/x".into())]
        );
        let form = RulesForm { headers: ": value".into(), ..Default::default() };
        assert!(form.header_list().is_err(), "a header needs a name");
    }

    #[test]
    fn empty_json_fields_are_none_and_bad_json_names_its_field() {
        let form = RulesForm { rules: "  ".into(), body: "{nope".into(), ..Default::default() };
        assert_eq!(form.rules_json().unwrap(), None);
        let err = form.body_json().unwrap_err().to_string();
        assert!(err.starts_with("body: not valid JSON"), "{err}");
    }

    #[test]
    fn the_create_form_reads_logins_allow_all_and_unverified() {
        let id = EndpointId::new();
        let form = WebhookForm {
            endpoint_id: id.to_string(),
            source_type: "github".into(),
            queue: " builds ".into(),
            max_attempts: "7".into(),
            logins: "octo, hubot\n\n  mona ".into(),
            ..Default::default()
        };
        let body = form.body().unwrap();
        assert_eq!((body.endpoint_id, body.queue.as_str(), body.max_attempts), (id, "builds", Some(7)));
        assert_eq!(
            body.trusted_actors,
            Some(TrustedActors::Logins { logins: vec!["octo".into(), "hubot".into(), "mona".into()] })
        );
        assert!(!body.unverified);

        let all = WebhookForm { allow_all: Some("on".into()), unverified: Some("on".into()), ..form.clone() };
        let body = all.body().unwrap();
        assert_eq!(body.trusted_actors, Some(TrustedActors::AllowAll { allow_all: true }));
        assert!(body.unverified);

        for bad in [
            WebhookForm { endpoint_id: "ep_nope".into(), ..form.clone() },
            WebhookForm { source_type: "gitlab".into(), ..form.clone() },
            WebhookForm { max_attempts: "five".into(), ..form.clone() },
        ] {
            assert!(matches!(bad.body(), Err(Error::InvalidArgument(_))), "{bad:?}");
        }
    }
}
