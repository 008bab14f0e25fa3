//! The ASCII rules of `_analyse`, `_word_tokens` and `_camel_parts`: with ASCII text the
//! case predicates, `casefold` and `\w` are plain byte tests, so they can be written here
//! exactly; anything non-ASCII goes back to Python.

pub(crate) fn is_lower(s: &[u8]) -> bool {
    s.iter().any(u8::is_ascii_lowercase) && !s.iter().any(u8::is_ascii_uppercase)
}

pub(crate) fn is_upper(s: &[u8]) -> bool {
    s.iter().any(u8::is_ascii_uppercase) && !s.iter().any(u8::is_ascii_lowercase)
}

pub(crate) fn is_alpha(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(u8::is_ascii_alphabetic)
}

pub(crate) fn is_digit(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(u8::is_ascii_digit)
}

pub(crate) fn is_alnum(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(u8::is_ascii_alphanumeric)
}

/// `str.istitle` of an alphabetic ASCII string: a capital, then lower case only.
pub(crate) fn is_title_alpha(s: &[u8]) -> bool {
    s[0].is_ascii_uppercase() && s[1..].iter().all(u8::is_ascii_lowercase)
}

pub(crate) fn lower(s: &[u8]) -> String {
    s.iter().map(|b| b.to_ascii_lowercase() as char).collect()
}

/// `[^\W\d_]{2,}` over ASCII: letter runs of two or more, lower-cased.
pub(crate) fn letter_runs(s: &[u8], out: &mut Vec<String>) {
    let mut i = 0;
    while i < s.len() {
        if s[i].is_ascii_alphabetic() {
            let start = i;
            while i < s.len() && s[i].is_ascii_alphabetic() {
                i += 1;
            }
            if i - start >= 2 {
                out.push(lower(&s[start..i]));
            }
        } else {
            i += 1;
        }
    }
}

/// `_camel_parts` for an ASCII piece without `_`.
pub(crate) fn camel_parts(p: &[u8]) -> Vec<&[u8]> {
    if is_lower(p) || is_digit(p) || p.len() < 2 {
        return vec![p];
    }
    let up = |j: usize| p[j].is_ascii_uppercase();
    let mut parts = Vec::new();
    let mut start = 0;
    for i in 1..p.len() {
        let after_lower = (p[i - 1].is_ascii_lowercase() || p[i - 1].is_ascii_digit()) && up(i);
        let acronym_end = i >= 2
            && up(i - 2)
            && up(i - 1)
            && up(i)
            && i + 1 < p.len()
            && p[i + 1].is_ascii_lowercase();
        if after_lower || acronym_end {
            parts.push(&p[start..i]);
            start = i;
        }
    }
    parts.push(&p[start..]);
    parts
}

pub(crate) fn mixed(part: &[u8]) -> bool {
    !is_alpha(part) && !is_digit(part)
}

/// The segments of an ASCII compound: split at `.`, `/`, `-`, `::`, without the underscores
/// next to each connector (`_*(?:[./-]|::)_*`).
pub(crate) fn segments(raw: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < raw.len() {
        let width = match raw[i] {
            b'.' | b'/' | b'-' => 1,
            b':' if i + 1 < raw.len() && raw[i + 1] == b':' => 2,
            _ => 0,
        };
        if width == 0 {
            i += 1;
            continue;
        }
        let mut end = i;
        while end > start && raw[end - 1] == b'_' {
            end -= 1;
        }
        out.push(&raw[start..end]);
        i += width;
        while i < raw.len() && raw[i] == b'_' {
            i += 1;
        }
        start = i;
    }
    out.push(&raw[start..]);
    out
}

/// `_word_tokens` for an ASCII compound.
pub(crate) fn word_tokens(raw: &[u8]) -> Vec<String> {
    let mut tokens = vec![lower(raw)];
    if is_alnum(raw) {
        let parts = camel_parts(raw);
        if parts.len() == 1 {
            if !is_alpha(raw) && !is_digit(raw) {
                letter_runs(raw, &mut tokens);
            }
            return tokens;
        }
        for part in parts {
            tokens.push(lower(part));
            if mixed(part) {
                letter_runs(part, &mut tokens);
            }
        }
        return tokens;
    }
    let segs = segments(raw);
    let compound = segs.len() > 1;
    for segment in segs {
        let mut parts = Vec::new();
        for piece in segment.split(|&b| b == b'_') {
            if !piece.is_empty() {
                parts.extend(camel_parts(piece));
            }
        }
        if compound && parts.len() > 1 {
            tokens.push(lower(segment));
        }
        let emit = compound || parts.len() > 1;
        for part in parts {
            if emit {
                tokens.push(lower(part));
            }
            if mixed(part) {
                letter_runs(part, &mut tokens);
            }
        }
    }
    tokens
}

/// The tokens of an ASCII run before the stopword and length filters (`_analyse`).
pub(crate) fn ascii_tokens(raw: &[u8], split: bool) -> Vec<String> {
    let alpha = is_alpha(raw);
    if !split || (alpha && (is_lower(raw) || is_title_alpha(raw) || is_upper(raw))) {
        return vec![lower(raw)];
    }
    if is_alnum(raw) && is_lower(raw) {
        let mut tokens = vec![lower(raw)];
        letter_runs(raw, &mut tokens);
        return tokens;
    }
    word_tokens(raw)
}
