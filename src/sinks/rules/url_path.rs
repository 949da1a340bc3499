//! URLs a sink message is built on: a base URL without its trailing slashes, and one
//! path segment percent-encoded so that it can never climb (`..`). Used by the
//! message's links and by the Apprise request alike.

/// `base` without its trailing slashes, so `{base}/message` has exactly one.
pub fn trim_base(base: &str) -> &str {
    base.trim_end_matches('/')
}

/// Percent-encodes `segment` for use as one URL path segment: everything but ASCII
/// letters, digits, `-`, `_` and `~` becomes `%XX` (`.` too, so `.` and `..` can never
/// act as dot-segments).
pub fn encode_path_segment(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0x0f)]));
        }
    }
    out
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_segments_are_percent_encoded_and_dots_cannot_climb() {
        assert_eq!(encode_path_segment("team-alerts_2~x"), "team-alerts_2~x");
        assert_eq!(encode_path_segment("a/b?c#d e"), "a%2Fb%3Fc%23d%20e");
        assert_eq!(encode_path_segment(".."), "%2E%2E");
        assert_eq!(encode_path_segment("é"), "%C3%A9");
        assert_eq!(encode_path_segment(""), "");
    }

    #[test]
    fn the_base_url_loses_trailing_slashes_only() {
        assert_eq!(trim_base("https://h/x//"), "https://h/x");
        assert_eq!(trim_base("https://h"), "https://h");
    }
}
