//! The encoded ranking features of a block (`text/features.py`).

/// Whether a line of `body` starts a mkdocstrings directive (`^:::[ \t]*[A-Za-z_]`, per line).
pub(crate) fn has_directive(body: &str) -> bool {
    body.contains(":::")
        && body.split('\n').any(|line| {
            line.strip_prefix(":::").is_some_and(|rest| {
                let rest = rest.trim_start_matches([' ', '\t']);
                rest.bytes()
                    .next()
                    .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
            })
        })
}

/// The encoded features of an ASCII body (`text/features.py`): a flags byte, then the
/// coverage tokens that are words too, the other tokens and the other words, each sorted
/// and space-joined, separated by newlines. ASCII `casefold` is `lower` and ASCII `\w` is
/// `[A-Za-z0-9_]`, and no ASCII text has CJK, so the rules need no Unicode table.
pub(crate) fn ascii_features(body: &str, tokens: &str, rest: &[String]) -> Vec<u8> {
    let folded = body.to_ascii_lowercase();
    let bytes = folded.as_bytes();
    let mut words: Vec<&str> = Vec::with_capacity(bytes.len() / 6 + 1);
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            words.push(&folded[start..i]);
        } else {
            i += 1;
        }
    }
    encoded(u8::from(has_directive(body)), tokens, rest, words)
}

/// Whether `c` is in the CJK class of `features.CJK` (`[\u3040-\u30ff\u3400-\u4dbf
/// \u4e00-\u9fff\uac00-\ud7af]`).
pub(crate) fn is_cjk_flag_char(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30ff | 0x3400..=0x4dbf | 0x4e00..=0x9fff | 0xac00..=0xd7af)
}

/// `features.cjk_head`: whether the first `CJK_HEAD` (400) characters hold a CJK one.
pub(crate) fn cjk_head(body: &str) -> bool {
    body.chars().take(400).any(is_cjk_flag_char)
}

/// The flags byte, then the tokens that are words, the other tokens, the other words.
pub(crate) fn encoded(flags: u8, tokens: &str, rest: &[String], mut words: Vec<&str>) -> Vec<u8> {
    let mut toks: Vec<&str> = Vec::with_capacity(tokens.len() / 4 + rest.len() + 1);
    if !tokens.is_empty() {
        toks.extend(tokens.split(' '));
    }
    toks.extend(rest.iter().map(String::as_str));
    toks.sort_unstable();
    toks.dedup();
    words.sort_unstable();
    words.dedup();
    let (mut both, mut tokens_only, mut words_only) = (
        Vec::with_capacity(toks.len()),
        Vec::with_capacity(toks.len()),
        Vec::with_capacity(words.len()),
    );
    let (mut t, mut w) = (0, 0);
    while t < toks.len() || w < words.len() {
        if w == words.len() || (t < toks.len() && toks[t] < words[w]) {
            tokens_only.push(toks[t]);
            t += 1;
        } else if t == toks.len() || words[w] < toks[t] {
            words_only.push(words[w]);
            w += 1;
        } else {
            both.push(toks[t]);
            t += 1;
            w += 1;
        }
    }
    let mut out = vec![flags];
    out.extend_from_slice(both.join(" ").as_bytes());
    out.push(b'\n');
    out.extend_from_slice(tokens_only.join(" ").as_bytes());
    out.push(b'\n');
    out.extend_from_slice(words_only.join(" ").as_bytes());
    out
}
