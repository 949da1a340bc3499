//! The vend form as posted: its fields read into a [`VendForm`], which turns into the
//! service's [`Vend`] (the API and the Board then validate alike).

use crate::domain::grants::{DRAIN_FAMILY, Verb};
use crate::error::{Error, Result};
use crate::service::endpoints::Vend;

/// The vend form's fields, as typed (kept to show the form again after a refusal).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VendForm {
    /// The slug.
    pub slug: String,
    /// Owner reference: the human's email or `team:<name>`.
    pub owner: String,
    /// The ticked grants, by name (unknown names are refused by [`VendForm::body`]).
    pub grants: Vec<String>,
    /// Default lease in seconds, as typed (empty: none).
    pub lease: String,
}

impl Default for VendForm {
    /// An empty form with the drain family ticked.
    fn default() -> Self {
        VendForm {
            slug: String::new(),
            owner: String::new(),
            grants: DRAIN_FAMILY.iter().map(|v| v.as_str().to_owned()).collect(),
            lease: String::new(),
        }
    }
}

impl VendForm {
    /// Reads the posted pairs (`grants` repeats, one per ticked box; `csrf_token` and
    /// anything unknown is ignored).
    pub fn from_pairs(pairs: &[(String, String)]) -> Self {
        let mut form = VendForm { grants: Vec::new(), ..VendForm::default() };
        for (name, value) in pairs {
            match name.as_str() {
                "slug" => form.slug = value.trim().to_owned(),
                "owner" => form.owner = value.trim().to_owned(),
                "grants" => form.grants.push(value.clone()),
                "default_lease_seconds" => form.lease = value.trim().to_owned(),
                _ => {}
            }
        }
        form
    }

    /// Whether the box for `verb` is ticked.
    pub fn has(&self, verb: Verb) -> bool {
        self.grants.iter().any(|g| g == verb.as_str())
    }

    /// The vend this form asks for. Only the form's own shape is checked here (a grant
    /// name, a whole number); everything else is the service's validation.
    pub fn body(&self) -> Result<Vend> {
        let grants = self
            .grants
            .iter()
            .map(|g| g.parse::<Verb>().map_err(|_| Error::invalid("grants", format!("unknown grant {g:?}"))))
            .collect::<Result<Vec<_>>>()?;
        let default_lease_seconds = match self.lease.as_str() {
            "" => None,
            raw => Some(
                raw.parse::<i32>()
                    .map_err(|_| Error::invalid("default_lease_seconds", "must be a whole number of seconds"))?,
            ),
        };
        Ok(Vend {
            slug: self.slug.clone(),
            owner: (!self.owner.is_empty()).then(|| self.owner.clone()),
            grants: Some(grants),
            default_lease_seconds,
            expires_at: None,
        })
    }
}
