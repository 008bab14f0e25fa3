//! The line screen of `scriptorium.text.snippets` (`_Prepared.term_lines`): which lines of a
//! code block may hold a query term as a token, the step that anchors every code result on
//! its best line and that a pasted issue text (hundreds of terms) repeats per term.
//!
//! The Python class is the reference; this follows it step for step. The window's lines are
//! ASCII (the caller blanks the others), so byte offsets are Python's string offsets and the
//! case predicates are ASCII's.

use crate::ascii::ascii_tokens;
use crate::{ascii_kind, runs, FxMap, Kind};
use aho_corasick::{AhoCorasick, BuildError};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use std::sync::{Arc, Mutex, OnceLock};

/// What precedes an inlined image's base64 payload (`tokenize._DATA_MARK`).
const DATA_MARK: &[u8] = b";base64,";

/// Automata kept for the term lists asked most recently. One search screens every result of
/// its window with the same terms, and building the automaton of a pasted text's hundred
/// terms costs far more than running it over a block (120 µs against a few for a short one).
const AUTOMATA: usize = 8;

type Automata = Mutex<Vec<(Vec<String>, Arc<AhoCorasick>)>>;

/// The automaton of `terms` (in this order: a match's pattern id is its index), built once
/// while it stays among the last `AUTOMATA` lists asked for.
fn automaton_for(terms: &[&str]) -> Result<Arc<AhoCorasick>, BuildError> {
    static CACHE: OnceLock<Automata> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(Vec::new()));
    let same =
        |key: &Vec<String>| key.len() == terms.len() && key.iter().zip(terms).all(|(a, b)| a == b);
    if let Ok(mut held) = cache.lock() {
        if let Some(at) = held.iter().position(|(key, _)| same(key)) {
            let entry = held.remove(at);
            let automaton = entry.1.clone();
            held.push(entry); // the most recent last
            return Ok(automaton);
        }
    }
    let made = Arc::new(AhoCorasick::new(terms)?);
    if let Ok(mut held) = cache.lock() {
        if held.len() >= AUTOMATA {
            held.remove(0);
        }
        held.push((terms.iter().map(|t| t.to_string()).collect(), made.clone()));
    }
    Ok(made)
}

/// A range of lines joined for searching, as `_Prepared` joins them.
#[pyclass(frozen, module = "scriptorium_native")]
pub struct ScreenedLines {
    original: Vec<u8>,
    lowered: String,
    ends: Vec<usize>,
}

#[pymethods]
impl ScreenedLines {
    #[new]
    fn new(window: Vec<String>) -> PyResult<Self> {
        let mut original = Vec::new();
        let mut ends = Vec::with_capacity(window.len());
        for line in &window {
            if !line.is_ascii() {
                return Err(PyValueError::new_err("screened lines must be ASCII"));
            }
            original.extend_from_slice(line.as_bytes());
            ends.push(original.len());
        }
        let lowered = String::from_utf8(original.to_ascii_lowercase())
            .map_err(|_| PyValueError::new_err("screened lines must be ASCII"))?;
        Ok(Self {
            original,
            lowered,
            ends,
        })
    }

    /// The lines (relative to the range) where `term` occurs as it could as a token.
    fn term_lines<'py>(&self, py: Python<'py>, term: &str) -> PyResult<Bound<'py, PyTuple>> {
        if term.is_empty() {
            return Err(PyValueError::new_err("an empty term is screened by Python"));
        }
        let lines = py.allow_threads(|| self.lines_of(term));
        PyTuple::new(py, lines)
    }

    /// `term_lines` of every one of `terms` (non-empty, lower-case ASCII), in one pass over
    /// the text: a line holds a term when an occurrence starts and ends in it at token bounds.
    fn terms_lines<'py>(
        &self,
        py: Python<'py>,
        terms: Vec<String>,
    ) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        if terms.iter().any(|t| t.is_empty()) {
            return Err(PyValueError::new_err("an empty term is screened by Python"));
        }
        let found = py
            .allow_threads(|| self.all_lines(&terms))
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        found
            .into_iter()
            .map(|lines| PyTuple::new(py, lines))
            .collect()
    }

    /// For each line holding at least one of the terms as a token, `(line, how many distinct
    /// terms it holds)`, by line: what a caller would count from `terms_lines`, in one pass,
    /// with the automaton made once for the search (`ScreenTerms`).
    fn counts_of(&self, py: Python<'_>, terms: &ScreenTerms) -> Vec<(usize, usize)> {
        py.allow_threads(|| self.line_counts(&terms.automaton, terms.count))
    }

    /// The earliest line holding the most distinct terms among its tokens (as
    /// `tokenize(line, drop_stopwords=False)` makes them), as `(line, how many)`; None when
    /// no line holds any. Lines are visited by their `counts_of` count, which
    /// bounds what their tokens hold, highest first, and only as far as one could still win:
    /// a few lines are tokenized, not every line a term occurs in.
    fn best_of(&self, py: Python<'_>, terms: &ScreenTerms) -> Option<(usize, usize)> {
        py.allow_threads(|| {
            let mut bounds = self.line_counts(&terms.automaton, terms.count);
            bounds.sort_by_key(|&(index, most)| (std::cmp::Reverse(most), index));
            let mut seen = vec![usize::MAX; terms.count];
            let mut best: Option<(usize, usize)> = None;
            for (index, most) in bounds {
                if let Some((best_index, best_count)) = best {
                    if most < best_count {
                        break; // no line left can hold as many
                    }
                    if most == best_count && index > best_index {
                        continue; // at most a tie, and the earlier line wins it
                    }
                }
                let count = terms.held_by(self.line(index), index, &mut seen);
                let wins = match best {
                    None => count > 0,
                    Some((best_index, best_count)) => {
                        count > best_count || (count == best_count && index < best_index)
                    }
                };
                if wins {
                    best = Some((index, count));
                }
            }
            best
        })
    }
}

/// A search's terms made into one automaton, for every `ScreenedLines.counts_of` of it.
#[pyclass(frozen, module = "scriptorium_native")]
pub struct ScreenTerms {
    automaton: Arc<AhoCorasick>,
    count: usize,
    /// Each term's index in the list, for `best_of`.
    ids: FxMap<String, usize>,
    /// The tokenizer's longest token (`MAX_TOKEN_CHARS`): longer ones are not tokens.
    max_chars: usize,
}

#[pymethods]
impl ScreenTerms {
    /// `terms`: distinct, non-empty, lower-case ASCII; `max_chars`: the tokenizer's longest
    /// token.
    #[new]
    fn new(terms: Vec<String>, max_chars: usize) -> PyResult<Self> {
        if terms.iter().any(|t| t.is_empty()) {
            return Err(PyValueError::new_err("an empty term is screened by Python"));
        }
        let patterns: Vec<&str> = terms.iter().map(String::as_str).collect();
        let automaton =
            automaton_for(&patterns).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let count = terms.len();
        let ids: FxMap<String, usize> = terms.into_iter().zip(0..).collect();
        if ids.len() != count {
            return Err(PyValueError::new_err("screened terms must be distinct"));
        }
        Ok(Self {
            automaton,
            count,
            ids,
            max_chars,
        })
    }
}

impl ScreenTerms {
    /// How many distinct terms the tokens of the ASCII `line` hold. `seen` holds, per term,
    /// the last `stamp` (line) it was counted for.
    fn held_by(&self, line: &[u8], stamp: usize, seen: &mut [usize]) -> usize {
        let blanked;
        let line = if line.windows(DATA_MARK.len()).any(|w| w == DATA_MARK) {
            blanked = blank_payloads(line);
            blanked.as_slice()
        } else {
            line
        };
        let kinds: Vec<Kind> = line.iter().map(|&b| ascii_kind(b)).collect();
        let mut count = 0;
        for (first, end, _) in runs(&kinds) {
            for token in ascii_tokens(&line[first..end], true) {
                if token.len() > self.max_chars {
                    continue;
                }
                if let Some(&id) = self.ids.get(&token) {
                    if seen[id] != stamp {
                        seen[id] = stamp;
                        count += 1;
                    }
                }
            }
        }
        count
    }
}

/// `tokenize.readable` of an ASCII line: each data URI's base64 payload (the run of
/// `[A-Za-z0-9+/=]` right after `;base64,`) replaced by a space.
fn blank_payloads(line: &[u8]) -> Vec<u8> {
    let payload = |b: u8| b.is_ascii_alphanumeric() || b == b'+' || b == b'/' || b == b'=';
    let mut out = Vec::with_capacity(line.len());
    let mut at = 0;
    while at < line.len() {
        if line[at..].starts_with(DATA_MARK) {
            out.extend_from_slice(DATA_MARK);
            at += DATA_MARK.len();
            let end = at + line[at..].iter().take_while(|&&b| payload(b)).count();
            if end > at {
                out.push(b' ');
                at = end;
            }
        } else {
            out.push(line[at]);
            at += 1;
        }
    }
    out
}

/// Which of `terms` occur anywhere in `text`, as substrings (`_Screen.occurring`'s test over
/// the lower-cased ASCII lines of a range), in one pass.
#[pyfunction]
pub fn terms_occurring(py: Python<'_>, text: &str, terms: Vec<String>) -> PyResult<Vec<bool>> {
    // "" is in every string.
    let mut seen: Vec<bool> = terms.iter().map(|t| t.is_empty()).collect();
    let searchable: Vec<usize> = (0..terms.len()).filter(|&i| !terms[i].is_empty()).collect();
    if searchable.is_empty() {
        return Ok(seen);
    }
    let patterns: Vec<&str> = searchable.iter().map(|&i| terms[i].as_str()).collect();
    let automaton = automaton_for(&patterns).map_err(|e| PyValueError::new_err(e.to_string()))?;
    py.allow_threads(|| {
        let mut left = patterns.len();
        for found in automaton.find_overlapping_iter(text) {
            let slot = searchable[found.pattern().as_usize()];
            if !seen[slot] {
                seen[slot] = true;
                left -= 1;
                if left == 0 {
                    break;
                }
            }
        }
    });
    Ok(seen)
}

impl ScreenedLines {
    /// Line `index` of the range as it was given.
    fn line(&self, index: usize) -> &[u8] {
        let start = if index > 0 { self.ends[index - 1] } else { 0 };
        &self.original[start..self.ends[index]]
    }

    fn all_lines(&self, terms: &[String]) -> Result<Vec<Vec<usize>>, BuildError> {
        let patterns: Vec<&str> = terms.iter().map(String::as_str).collect();
        let automaton = automaton_for(&patterns)?;
        let mut lines: Vec<Vec<usize>> = vec![Vec::new(); terms.len()];
        self.each_term_line(&automaton, terms.len(), |term, line| lines[term].push(line));
        Ok(lines)
    }

    fn line_counts(&self, automaton: &AhoCorasick, terms: usize) -> Vec<(usize, usize)> {
        let mut counts: Vec<usize> = vec![0; self.ends.len()];
        self.each_term_line(automaton, terms, |_, line| counts[line] += 1);
        counts
            .into_iter()
            .enumerate()
            .filter(|&(_, count)| count > 0)
            .collect()
    }

    /// Calls `found(term, line)` once for each line where a term occurs as it could as a
    /// token, in one pass of `automaton` (the automaton of the `terms` terms) over the text.
    fn each_term_line(
        &self,
        automaton: &AhoCorasick,
        terms: usize,
        mut found: impl FnMut(usize, usize),
    ) {
        let ends = &self.ends;
        // The last line each term was found on (matches come by their end, so a term's lines
        // come in order).
        let mut last: Vec<usize> = vec![usize::MAX; terms];
        for matched in automaton.find_overlapping_iter(self.lowered.as_str()) {
            let (at, end) = (matched.start(), matched.end());
            let index = ends.partition_point(|&e| e <= at);
            let term = matched.pattern().as_usize();
            if last[term] == index {
                continue; // this line holds the term already
            }
            let line_start = if index > 0 { ends[index - 1] } else { 0 };
            let line = &self.original[line_start..ends[index]];
            if token_bounds(line, at - line_start, end - line_start) {
                last[term] = index;
                found(term, index);
            }
        }
    }

    fn lines_of(&self, term: &str) -> Vec<usize> {
        let (text, ends) = (self.lowered.as_str(), &self.ends);
        let size = term.len();
        let mut lines = Vec::new();
        let mut found = text.find(term);
        while let Some(at) = found {
            // bisect_right(ends, at): the line whose end lies past the occurrence's start.
            let index = ends.partition_point(|&end| end <= at);
            let line_start = if index > 0 { ends[index - 1] } else { 0 };
            let line = &self.original[line_start..ends[index]];
            let begin = at - line_start;
            if !token_bounds(line, begin, begin + size) {
                found = find_from(text, term, at + 1);
                continue;
            }
            lines.push(index);
            // One occurrence per line is enough: continue from the next line.
            found = find_from(text, term, ends[index]);
        }
        lines
    }
}

fn find_from(text: &str, term: &str, from: usize) -> Option<usize> {
    if from > text.len() {
        return None;
    }
    text[from..].find(term).map(|at| at + from)
}

/// `_token_bounds`: whether `line[begin..end]` could be one of the line's tokens.
fn token_bounds(line: &[u8], begin: usize, end: usize) -> bool {
    if end > line.len() {
        return false; // straddles the end of the line
    }
    if begin > 0 {
        let (before, first) = (line[begin - 1], line[begin]);
        if before.is_ascii_alphanumeric()
            && !(first.is_ascii_uppercase()
                || (before.is_ascii_digit() && first.is_ascii_alphabetic()))
        {
            return false;
        }
    }
    if end < line.len() {
        let (last, after) = (line[end - 1], line[end]);
        if after.is_ascii_alphanumeric()
            && !(after.is_ascii_uppercase()
                || (after.is_ascii_digit() && last.is_ascii_alphabetic()))
        {
            return false;
        }
    }
    true
}
