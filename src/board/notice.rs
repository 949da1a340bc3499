//! A one-time message carried across a redirect (post/redirect/get) in a short-lived
//! cookie, shown at the top of the next page.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// Name of the cookie that carries a notice to the next page.
pub const NOTICE_COOKIE: &str = "sb_notice";

/// Longest notice text kept (longer text is cut at a character boundary).
const NOTICE_MAX_BYTES: usize = 400;

/// How a notice reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Something was done.
    Done,
    /// Done, but look closer (e.g. fewer rows than expected).
    Warn,
}

/// A one-time message at the top of the next page ("Retried 3 dead letters").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// How it reads.
    pub tone: Tone,
    /// The text (plain; escaped when shown).
    pub text: String,
}

impl Notice {
    /// A notice that something was done.
    pub fn done(text: impl Into<String>) -> Self {
        Notice { tone: Tone::Done, text: text.into() }
    }

    /// A notice asking for a closer look.
    pub fn warn(text: impl Into<String>) -> Self {
        Notice { tone: Tone::Warn, text: text.into() }
    }

    /// The cookie value carrying this notice.
    pub fn encode(&self) -> String {
        let mut text = self.text.as_str();
        if text.len() > NOTICE_MAX_BYTES {
            let mut end = NOTICE_MAX_BYTES;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text = &text[..end];
        }
        let tone = match self.tone {
            Tone::Done => 'd',
            Tone::Warn => 'w',
        };
        URL_SAFE_NO_PAD.encode(format!("{tone}{text}"))
    }

    /// The notice a cookie value carries (anything malformed is ignored: it is only a
    /// message, and a client can only ever show one to itself).
    pub fn decode(raw: &str) -> Option<Self> {
        if raw.len() > NOTICE_MAX_BYTES * 2 {
            return None;
        }
        let bytes = URL_SAFE_NO_PAD.decode(raw).ok()?;
        let text = String::from_utf8(bytes).ok()?;
        let mut chars = text.chars();
        let tone = match chars.next()? {
            'd' => Tone::Done,
            'w' => Tone::Warn,
            _ => return None,
        };
        let text = chars.as_str();
        (!text.is_empty()).then(|| Notice { tone, text: text.to_owned() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_survive_the_cookie_and_garbage_does_not() {
        let n = Notice::warn("Retried 3 of 5 — two had left the list <b>");
        assert_eq!(Notice::decode(&n.encode()), Some(n));
        assert_eq!(Notice::decode("!!"), None);
        assert_eq!(Notice::decode(&URL_SAFE_NO_PAD.encode("xhello")), None);
        assert_eq!(Notice::decode(&URL_SAFE_NO_PAD.encode("d")), None);
    }

    #[test]
    fn long_notices_are_cut_at_a_character_boundary() {
        let n = Notice::done("é".repeat(NOTICE_MAX_BYTES));
        let back = Notice::decode(&n.encode()).unwrap();
        assert_eq!(back.text.len(), NOTICE_MAX_BYTES);
    }
}
