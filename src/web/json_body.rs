//! The rules a JSON request body is read by, in one place for every surface that takes
//! one: the REST API's bodies ([`crate::http`]'s extractors read the bytes, then
//! [`parse`]) and an MCP tool's arguments ([`from_object`]), so a tool refuses exactly
//! what its route refuses, with the same `invalid_argument` messages. Also the largest
//! body either accepts ([`BODY_LIMIT`]).

use serde::de::DeserializeOwned;

use crate::domain::text::json_has_nul;
use crate::error::Error;

/// Largest JSON body accepted by the agent and operator APIs (payloads included).
pub const BODY_LIMIT: usize = 1024 * 1024;

/// What a body holding NUL is refused with.
const NUL_REFUSED: &str = "body: text may not contain NUL (\\u0000) characters";

/// `bytes` (a whole request body, not blank) read as `T`.
pub fn parse<T: DeserializeOwned + 'static>(bytes: &[u8]) -> Result<T, Error> {
    // Every body of these APIs is a JSON object, as the OpenAPI document says. serde
    // would also read a struct from an array of its fields in order, so `[null, null]`
    // was accepted as a heartbeat; anything but an object is refused first. A body read
    // as a raw `Value` goes to a parser of its own (the rules), which names what is wrong.
    let raw = std::any::TypeId::of::<T>() == std::any::TypeId::of::<serde_json::Value>();
    if !raw && bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(Error::InvalidArgument("body: must be a JSON object".into()));
    }
    let parsed = serde_json::from_slice(bytes).map_err(|e| Error::InvalidArgument(format!("body: {e}")))?;
    refuse_nul(bytes)?;
    Ok(parsed)
}

/// PostgreSQL cannot store U+0000 in `text` or `jsonb`, so a NUL anywhere in a body
/// (a title, a summary, a payload string or key) used to reach the database and come
/// back as a 500. Valid JSON can only carry it as the escape `\u0000`, so bodies
/// without that sequence pass untouched; the rest are decoded to tell a real NUL from
/// an escaped backslash followed by "u0000".
fn refuse_nul(bytes: &[u8]) -> Result<(), Error> {
    if !bytes.windows(6).any(|w| w.eq_ignore_ascii_case(b"\\u0000")) {
        return Ok(());
    }
    match serde_json::from_slice::<serde_json::Value>(bytes) {
        Ok(v) if json_has_nul(&v) => Err(Error::InvalidArgument(NUL_REFUSED.into())),
        _ => Ok(()),
    }
}

/// A body that arrived already parsed (an MCP tool's arguments): read as `T` by the same
/// rules as a JSON body here, so a tool refuses exactly what its route refuses (unknown
/// fields, wrong types, NUL characters), with the same `invalid_argument` messages.
pub fn from_object<T: DeserializeOwned>(object: serde_json::Map<String, serde_json::Value>) -> Result<T, Error> {
    let value = serde_json::Value::Object(object);
    if json_has_nul(&value) {
        return Err(Error::InvalidArgument(NUL_REFUSED.into()));
    }
    serde_json::from_value(value).map_err(|e| Error::InvalidArgument(format!("body: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[expect(dead_code, reason = "only parsed, to see which bodies are accepted")]
    struct Two {
        a: Option<i32>,
        b: Option<String>,
    }

    #[test]
    fn only_a_json_object_is_a_body() {
        assert!(parse::<Two>(br#" {"a": 1}"#).is_ok());
        for refused in [&b"[null, null]"[..], b"[1, \"x\"]", b"null", b"1", b"\"a\""] {
            assert!(
                matches!(parse::<Two>(refused), Err(Error::InvalidArgument(_))),
                "{}",
                String::from_utf8_lossy(refused)
            );
        }
    }
}
