//! Sender- and agent-written text made safe to hand to a receiver that may feed it to a
//! language model: one line, no control characters, and no `</channel>` that could close
//! the channel tag the receiver wraps our text in.
//!
//! Order matters: control characters are removed **before** `</channel>` is looked for,
//! so `</chan\u{7}nel>` cannot survive as `</channel>` once the bell is gone; and the cut
//! comes last, counting characters, so it never splits one. Neutralising never changes
//! the number of characters other than by removing controls (`</channel>` and
//! `«/channel»` are both ten characters), so a cut applied to stored text of a known
//! character length never bites.

/// Longest `summary`, in characters.
pub const SUMMARY_MAX_CHARS: usize = 200;
/// Longest `kind` or `source`, in characters.
pub const LABEL_MAX_CHARS: usize = 128;

/// The tag that must never reach a receiver verbatim (matched in any ASCII case).
const CHANNEL_CLOSE: &str = "</channel>";
/// What it becomes.
const CHANNEL_CLOSE_NEUTRAL: &str = "«/channel»";

/// Neutralises `text`: CR, LF and the Unicode line and paragraph separators become a
/// space, every other control character is removed, and `</channel>` (any case)
/// becomes `«/channel»`.
pub fn neutralise(text: &str) -> String {
    let one_line: String = text
        .chars()
        .filter_map(|c| match c {
            // Line breaks become spaces so words on either side stay apart.
            '\r' | '\n' | '\u{2028}' | '\u{2029}' => Some(' '),
            c if c.is_control() => None,
            c => Some(c),
        })
        .collect();
    replace_channel_close(&one_line)
}

/// Neutralises `text`, then keeps at most `max_chars` characters.
pub fn neutralise_to(text: &str, max_chars: usize) -> String {
    let mut out = neutralise(text);
    out.truncate(char_boundary_after(&out, max_chars));
    out
}

/// The first `max_chars` characters of `text` (all of it when shorter).
pub fn truncate_chars(text: &str, max_chars: usize) -> &str {
    &text[..char_boundary_after(text, max_chars)]
}

/// The byte offset just after the first `max_chars` characters.
fn char_boundary_after(text: &str, max_chars: usize) -> usize {
    text.char_indices().nth(max_chars).map_or(text.len(), |(at, _)| at)
}

/// Replaces every `</channel>` (ASCII case-insensitive). The tag starts with its only
/// `<` and the replacement has none, so matches cannot overlap and no new one can form.
fn replace_channel_close(text: &str) -> String {
    let bytes = text.as_bytes();
    let needle = CHANNEL_CLOSE.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut at = 0;
    while at + needle.len() <= bytes.len() {
        if bytes[at..at + needle.len()].eq_ignore_ascii_case(needle) {
            // `<` and `>` are ASCII, so both ends of a match are character boundaries.
            out.push_str(&text[copied..at]);
            out.push_str(CHANNEL_CLOSE_NEUTRAL);
            at += needle.len();
            copied = at;
        } else {
            at += 1;
        }
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn line_breaks_become_spaces_and_other_controls_vanish() {
        assert_eq!(neutralise("a\r\nb\nc\rd"), "a  b c d");
        assert_eq!(neutralise("tab\there\u{7}\u{1b}[31m\u{0}\u{7f}\u{85}!"), "tabhere[31m!");
        assert_eq!(neutralise("x\u{2028}y\u{2029}z"), "x y z");
    }

    #[test]
    fn a_channel_close_tag_is_defused_in_any_case() {
        assert_eq!(neutralise("ok</channel>then"), "ok«/channel»then");
        assert_eq!(neutralise("</CHANNEL></Channel>"), "«/channel»«/channel»");
        assert_eq!(neutralise("<channel>open is fine</channel"), "<channel>open is fine</channel");
    }

    #[test]
    fn a_tag_assembled_by_removing_controls_is_defused_too() {
        assert_eq!(neutralise("</chan\u{7}nel>"), "«/channel»");
        assert_eq!(neutralise("<</channel>/channel>"), "<«/channel»/channel>");
    }

    #[test]
    fn plain_and_multibyte_text_passes_unchanged() {
        let s = "Build failed on main — ünïcödé 🚀 <b>bold</b>";
        assert_eq!(neutralise(s), s);
    }

    #[test]
    fn truncation_counts_characters_not_bytes() {
        let s = "é".repeat(300);
        let cut = neutralise_to(&s, SUMMARY_MAX_CHARS);
        assert_eq!(cut.chars().count(), 200);
        assert_eq!(cut.len(), 400);
        assert_eq!(truncate_chars("🚀🚀🚀", 2), "🚀🚀");
        assert_eq!(truncate_chars("ab", 5), "ab");
        assert_eq!(truncate_chars("ab", 0), "");
    }

    #[test]
    fn the_cut_applies_after_neutralising() {
        // Five bells and then ten letters: the bells do not count towards the limit.
        assert_eq!(neutralise_to("\u{7}\u{7}\u{7}\u{7}\u{7}abcdefghij", 10), "abcdefghij");
    }

    proptest! {
        #[test]
        fn neutralised_text_has_no_controls_and_no_channel_close(s in any::<String>(), max in 0usize..300) {
            let out = neutralise_to(&s, max);
            let clean = out.chars().all(|c| !c.is_control() && !matches!(c, '\u{2028}' | '\u{2029}'));
            prop_assert!(clean, "control or line separator left in {:?}", out);
            prop_assert!(!out.to_ascii_lowercase().contains(CHANNEL_CLOSE));
            prop_assert!(out.chars().count() <= max);
        }

        #[test]
        fn injected_channel_closes_never_survive(
            parts in proptest::collection::vec("[a-z\\r\\n\\t]{0,4}", 0..6),
            cases in proptest::collection::vec("(?i:</channel>)", 0..6),
        ) {
            let mixed: String = parts.iter().zip(cases.iter().chain(std::iter::repeat(&String::new())))
                .map(|(p, c)| format!("{p}{c}"))
                .collect();
            let out = neutralise(&mixed);
            prop_assert!(!out.to_ascii_lowercase().contains(CHANNEL_CLOSE));
        }

        #[test]
        fn neutralising_keeps_the_character_count_but_for_controls(s in any::<String>()) {
            let controls = s.chars().filter(|c| c.is_control() && !matches!(c, '\r' | '\n')).count();
            prop_assert_eq!(neutralise(&s).chars().count(), s.chars().count() - controls);
        }
    }
}
