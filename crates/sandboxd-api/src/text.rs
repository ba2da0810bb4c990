//! Text from a sandbox or a build, made fit to show.

/// The text without terminal escape sequences: CSI (`ESC [ ... final`, colours and cursor
/// moves), OSC (`ESC ] ... BEL` or `ESC \`, window titles and links) and the shorter ones.
/// One pass over the text: the result is never longer than it.
pub fn strip_ansi(text: &str) -> String {
    let mut plain = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            plain.push(c);
            continue;
        }
        match chars.next() {
            // Parameters and intermediates, ended by a byte in '@'..='~'.
            Some('[') => {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            // Ended by BEL or by ST (ESC \).
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\u{7}' {
                        break;
                    }
                    if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                        chars.next();
                        break;
                    }
                }
            }
            // Intermediates (' '..='/'), then the final byte (`ESC ( B` picks a character set).
            Some(c) if (' '..='/').contains(&c) => {
                for c in chars.by_ref() {
                    if !(' '..='/').contains(&c) {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    plain
}

#[cfg(test)]
mod tests {
    use super::strip_ansi;

    #[test]
    fn colours_titles_and_lone_escapes_go_and_the_text_stays() {
        assert_eq!(
            strip_ansi("\u{1b}[91mdebconf: falling back\u{1b}[0m"),
            "debconf: falling back"
        );
        assert_eq!(
            strip_ansi("\u{1b}[0;31mValueError\u{1b}[0m: bad [0m"),
            "ValueError: bad [0m"
        );
        assert_eq!(strip_ansi("\u{1b}]0;title\u{7}after"), "after");
        assert_eq!(strip_ansi("\u{1b}]8;;http://x\u{1b}\\link"), "link");
        assert_eq!(strip_ansi("a\u{1b}(Bb"), "ab");
        assert_eq!(strip_ansi("cut off\u{1b}[1;3"), "cut off");
        assert_eq!(strip_ansi("plain ünïcode"), "plain ünïcode");
    }
}
