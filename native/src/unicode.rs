//! What Python's Unicode tables say, asked of Python once per code point and remembered:
//! whether `\w` matches a character, and what `str.casefold` makes of it.

use pyo3::prelude::*;

use crate::{State, Tokenizer};

impl Tokenizer {
    /// Whether Python's `\w` matches the non-ASCII character `c` (asked once per code point).
    pub(crate) fn is_word_char(
        &self,
        py: Python<'_>,
        state: &mut State,
        c: char,
    ) -> PyResult<bool> {
        asked_once(&mut state.words, c, |text| {
            Ok(!self.is_word.bind(py).call1((text,))?.is_none())
        })
    }

    /// Whether NFKC keeps `c` as it is wherever it stands, as `stable(c)` says (asked once
    /// per code point and remembered).
    pub(crate) fn is_nfkc_stable(
        &self,
        state: &mut State,
        c: char,
        stable: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        asked_once(&mut state.stable, c, |text| {
            stable.call1((text,))?.is_truthy()
        })
    }

    /// Python's `\w+` over `body.casefold()`: the folded text, and each word's byte range
    /// in it. `str.casefold` folds each character on its own (full case folding, no
    /// context), so it is asked of `casefold` once per non-ASCII code point.
    pub(crate) fn unicode_words(
        &self,
        py: Python<'_>,
        state: &mut State,
        body: &str,
        casefold: &Bound<'_, PyAny>,
    ) -> PyResult<(String, Vec<(usize, usize)>)> {
        if state.folds.is_empty() {
            state.folds = vec![0; 0x11_0000];
        }
        let mut folded = String::with_capacity(body.len());
        for c in body.chars() {
            if c.is_ascii() {
                folded.push(c.to_ascii_lowercase());
                continue;
            }
            let code = c as u32;
            if state.folds[code as usize] == 0 {
                let mut buffer = [0u8; 4];
                let made: String = casefold.call1((&*c.encode_utf8(&mut buffer),))?.extract()?;
                if made.len() == c.len_utf8() && made.starts_with(c) {
                    state.folds[code as usize] = 1;
                } else {
                    state.folds[code as usize] = 2;
                    state.fold_map.insert(code, made.into_boxed_str());
                }
            }
            if state.folds[code as usize] == 1 {
                folded.push(c);
            } else {
                folded.push_str(&state.fold_map[&code]);
            }
        }
        let mut ranges = Vec::new();
        let mut start: Option<usize> = None;
        for (at, f) in folded.char_indices() {
            let is_word = if f.is_ascii() {
                f.is_ascii_alphanumeric() || f == '_'
            } else {
                self.is_word_char(py, state, f)?
            };
            match (is_word, start) {
                (true, None) => start = Some(at),
                (false, Some(from)) => {
                    ranges.push((from, at));
                    start = None;
                }
                _ => {}
            }
        }
        if let Some(from) = start {
            ranges.push((from, folded.len()));
        }
        Ok((folded, ranges))
    }
}

/// What `ask` says of `c` (given as a one-character string), remembered in `table`: one
/// byte per code point, 1 for yes and 2 for no, made on first use.
fn asked_once(
    table: &mut Vec<u8>,
    c: char,
    ask: impl FnOnce(&str) -> PyResult<bool>,
) -> PyResult<bool> {
    if table.is_empty() {
        *table = vec![0; 0x11_0000];
    }
    let code = c as usize;
    if table[code] != 0 {
        return Ok(table[code] == 1);
    }
    let mut buffer = [0u8; 4];
    let found = ask(c.encode_utf8(&mut buffer))?;
    table[code] = if found { 1 } else { 2 };
    Ok(found)
}
