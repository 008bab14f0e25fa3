//! The window sweep of `scriptorium.text.preview` (`_best_start_sweep`) for ASCII text: where
//! a result's preview starts when a pasted text asks for it with dozens of terms. Every term's
//! occurrences are found and their windows merged, per result of every search.
//!
//! The Python function is the reference; this follows it step for step. The text is ASCII
//! (the caller checks), so byte offsets are Python's string offsets and no character is CJK.

use pyo3::prelude::*;

/// The start an occurrence at `found` proposes (`_propose` without CJK): a third of the
/// budget before it, clamped to the text, moved forward out of a word it falls inside (never
/// past the occurrence).
fn propose(collapsed: &[u8], found: usize, lead: usize, last: usize) -> usize {
    let start = found.saturating_sub(lead).min(last);
    if start > 0 && collapsed[start - 1] != b' ' && collapsed[start] != b' ' {
        let end = (found + 1).min(collapsed.len());
        if let Some(gap) = collapsed[start..end].iter().position(|&b| b == b' ') {
            return start + gap + 1;
        }
    }
    start
}

/// Every occurrence of `term` in `text`, overlapping ones included (`str.find` from the
/// last one plus one).
fn occurrences<'a>(text: &'a [u8], term: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    let finder = memchr::memmem::Finder::new(term);
    let mut from = 0;
    std::iter::from_fn(move || {
        if term.is_empty() || from > text.len() {
            return None;
        }
        let at = finder.find(&text[from..])? + from;
        from = at + 1;
        Some(at)
    })
}

/// `_best_start_sweep(collapsed, haystack, terms, max_chars)` with `MAX_OCCURRENCES` given:
/// the start of the window holding the most distinct terms, the earliest among equals (0 when
/// no term occurs). `collapsed` and `haystack` (its case-folded copy) are ASCII and of one
/// length; a term with other characters occurs nowhere in them.
#[pyfunction]
pub fn best_start_sweep(
    py: Python<'_>,
    collapsed: &str,
    haystack: &str,
    terms: Vec<String>,
    max_chars: usize,
    max_occurrences: usize,
) -> usize {
    py.allow_threads(|| sweep(collapsed, haystack, &terms, max_chars, max_occurrences))
}

fn sweep(
    collapsed: &str,
    haystack: &str,
    terms: &[String],
    max_chars: usize,
    max_occurrences: usize,
) -> usize {
    let (collapsed, haystack) = (collapsed.as_bytes(), haystack.as_bytes());
    let size = collapsed.len();
    let lead = max_chars / 3;
    let last = size.saturating_sub(max_chars);
    let mut starts: Vec<usize> = Vec::new();
    // (position, +1 or -1): where a term's merged ranges of window starts open and close.
    // Positions may be negative before the text starts, as in Python.
    let mut events: Vec<(i64, i64)> = Vec::new();
    for term in terms {
        let term = term.as_bytes();
        // A window holding an occurrence starts at most this far before it.
        let reach = term.len() as i64 - max_chars as i64;
        let mut seen = 0;
        let (mut low, mut high) = (-1i64, -1i64);
        for found in occurrences(haystack, term) {
            if seen < max_occurrences {
                seen += 1;
                starts.push(propose(collapsed, found, lead, last));
            }
            if reach <= 0 {
                // A term longer than a window fits in none.
                let found = found as i64;
                if high >= 0 && found + reach <= high + 1 {
                    high = found;
                } else {
                    if high >= 0 {
                        events.push((low, 1));
                        events.push((high + 1, -1));
                    }
                    low = found + reach;
                    high = found;
                }
            }
        }
        if high >= 0 {
            events.push((low, 1));
            events.push((high + 1, -1));
        }
    }
    if starts.is_empty() {
        return 0;
    }
    events.sort_unstable();
    starts.sort_unstable();
    starts.dedup();
    let (mut best_start, mut best_score, mut score, mut i) = (0usize, -1i64, 0i64, 0usize);
    for start in starts {
        while i < events.len() && events[i].0 <= start as i64 {
            score += events[i].1;
            i += 1;
        }
        if score > best_score {
            best_start = start;
            best_score = score;
        }
    }
    best_start
}
