//! The compiled fast path of `scriptorium.text.tokenize`.
//!
//! The Python module is the reference: this one finds the same runs (words joined by
//! connectors, CJK runs) and analyses the runs whose rules it can follow exactly: pure-ASCII
//! words (ASCII case rules, no Unicode tables involved) and CJK runs (bigrams of the
//! characters as they are). Every other run (a word with a non-ASCII letter, where `\w`,
//! `str.casefold` and the case predicates of Python's Unicode tables decide) is handed back
//! to the Python analyser, and stemming goes through the Python stemmer; both are memoised
//! here like the Python memo does. Whether a non-ASCII code point is `\w` is asked of
//! Python's `re` (once per code point), so run boundaries follow Python's tables, never
//! Rust's. Texts arrive with their data URIs' payloads blanked (`tokenize.readable`, rules 2).

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Mutex;

mod ascii;
mod features;
mod markdown;
mod preview;
mod screen;
mod unicode;
mod vectors;

use ascii::{ascii_tokens, is_alpha};
use features::{ascii_features, cjk_head, encoded, has_directive};

/// The rules version this code follows (`TOKENIZER_VERSION` of the Python module).
const RULES: &str = "2";
const CACHE_LIMIT: usize = 65_536;
const CACHEABLE_BYTES: usize = 128 * 4;

/// FxHash: short keys, no hostile input to defend against (the memo is bounded).
#[derive(Default)]
struct Fx(u64);

impl Hasher for Fx {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().unwrap()));
        }
        for &b in chunks.remainder() {
            self.add(b as u64);
        }
    }
}

impl Fx {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<Fx>>;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Word,
    Under,
    Conn,
    Colon,
    Cjk,
    Other,
}

type Tokens = Box<[Py<PyString>]>;

/// Run -> tokens, in two generations as in the Python memo (bounded, words in use survive).
#[derive(Default)]
struct Memo {
    young: FxMap<Box<str>, Tokens>,
    old: FxMap<Box<str>, Tokens>,
}

impl Memo {
    /// Hands the tokens of `raw` to `found` and says whether they were remembered (one
    /// lookup for a young entry; an old one is copied to the young table).
    fn with(&mut self, py: Python<'_>, raw: &str, found: impl FnOnce(&Tokens)) -> bool {
        if let Some(tokens) = self.young.get(raw) {
            found(tokens);
            return true;
        }
        let Some(tokens) = self.old.get(raw) else {
            return false;
        };
        found(tokens);
        let copy: Tokens = tokens.iter().map(|t| t.clone_ref(py)).collect();
        self.insert(raw, copy);
        true
    }

    fn insert(&mut self, raw: &str, tokens: Tokens) {
        if self.young.len() >= CACHE_LIMIT {
            self.old = std::mem::take(&mut self.young);
        }
        self.young.insert(raw.into(), tokens);
    }
}

/// Token -> its stem, in two generations like `Memo`: a tree whose vocabulary outgrows one
/// table (base64 data in pages makes hundreds of thousands of one-off words) keeps the words in
/// use rather than stemming every common word again through Python after each turnover.
#[derive(Default)]
struct Stems {
    young: FxMap<Box<str>, Py<PyString>>,
    old: FxMap<Box<str>, Py<PyString>>,
}

impl Stems {
    fn get(&mut self, py: Python<'_>, token: &str) -> Option<Py<PyString>> {
        if let Some(found) = self.young.get(token) {
            return Some(found.clone_ref(py));
        }
        let found = self.old.remove(token)?;
        let out = found.clone_ref(py);
        self.insert(token, found);
        Some(out)
    }

    fn insert(&mut self, token: &str, stem: Py<PyString>) {
        if self.young.len() >= CACHE_LIMIT {
            self.old = std::mem::take(&mut self.young);
        }
        self.young.insert(token.into(), stem);
    }
}

/// A piece of text -> the text made of it: a run's tokens joined by spaces (the index's form,
/// made without a Python string per token), or a run's NFKC. Two generations, as `Memo`.
#[derive(Default)]
struct TextMemo {
    young: FxMap<Box<str>, Box<str>>,
    old: FxMap<Box<str>, Box<str>>,
}

impl TextMemo {
    /// Hands what `raw` made to `found` and says whether it was remembered (one lookup
    /// for a young entry; an old one is moved to the young table).
    fn with(&mut self, raw: &str, found: impl FnOnce(&str)) -> bool {
        if let Some(made) = self.young.get(raw) {
            found(made);
            return true;
        }
        let Some(made) = self.old.remove(raw) else {
            return false;
        };
        found(&made);
        self.insert(raw, made);
        true
    }

    fn insert(&mut self, raw: &str, joined: Box<str>) {
        if self.young.len() >= CACHE_LIMIT {
            self.old = std::mem::take(&mut self.young);
        }
        self.young.insert(raw.into(), joined);
    }
}

#[derive(Default)]
struct State {
    memos: [Memo; 16],
    joined: [TextMemo; 16],
    /// A run NFKC changes, with the character before it -> its NFKC.
    nfkc: TextMemo,
    stems: Stems,
    pool: FxMap<Box<str>, Py<PyString>>,
    /// Per code point, once asked: 1 when Python's `\w` matches it, 2 when not.
    words: Vec<u8>,
    /// Per code point, once asked: 1 when NFKC keeps it wherever it stands, 2 when not.
    stable: Vec<u8>,
    /// Per code point, once asked: 1 when `str.casefold` keeps it as it is, 2 when it
    /// folds to what `fold_map` holds.
    folds: Vec<u8>,
    fold_map: FxMap<u32, Box<str>>,
}

impl State {
    fn share(&mut self, py: Python<'_>, token: &str) -> Py<PyString> {
        if let Some(found) = self.pool.get(token) {
            return found.clone_ref(py);
        }
        if self.pool.len() >= 4 * CACHE_LIMIT {
            self.pool.clear();
        }
        let made = PyString::new(py, token).unbind();
        self.pool.insert(token.into(), made.clone_ref(py));
        made
    }
}

#[pyclass(frozen)]
struct Tokenizer {
    stopwords: HashSet<String>,
    max_chars: usize,
    cjk: Vec<(u32, u32)>,
    is_word: Py<PyAny>,
    state: Mutex<State>,
}

fn in_ranges(ranges: &[(u32, u32)], c: u32) -> bool {
    // ranges are sorted, disjoint, end exclusive
    let i = ranges.partition_point(|r| r.1 <= c);
    i < ranges.len() && ranges[i].0 <= c
}

pub(crate) fn ascii_kind(b: u8) -> Kind {
    match b {
        b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z' => Kind::Word,
        b'_' => Kind::Under,
        b'.' | b'/' | b'-' => Kind::Conn,
        b':' => Kind::Colon,
        _ => Kind::Other,
    }
}

/// The runs of `kinds` (one per character) as (first, end) character indices and whether
/// each is a CJK run: `WORD++(?:CONNECTOR WORD++)*+ | CJK++` of the Python module.
pub(crate) fn runs(kinds: &[Kind]) -> Vec<(usize, usize, bool)> {
    let n = kinds.len();
    let at = |j: usize| if j < n { kinds[j] } else { Kind::Other };
    let word_end = |mut j: usize| {
        while j < n && kinds[j] == Kind::Word {
            j += 1;
        }
        j
    };
    let mut out = Vec::with_capacity(n / 4 + 1);
    let mut i = 0;
    while i < n {
        match kinds[i] {
            Kind::Word => {
                let start = i;
                i = word_end(i);
                loop {
                    let mut j = i;
                    while at(j) == Kind::Under {
                        j += 1;
                    }
                    let underscores = j - i;
                    let connected = if at(j) == Kind::Conn {
                        j += 1;
                        true
                    } else if at(j) == Kind::Colon && at(j + 1) == Kind::Colon {
                        j += 2;
                        true
                    } else {
                        false
                    };
                    if connected {
                        while at(j) == Kind::Under {
                            j += 1;
                        }
                    } else if underscores == 0 {
                        break;
                    }
                    if at(j) != Kind::Word {
                        break;
                    }
                    i = word_end(j);
                }
                out.push((start, i, false));
            }
            Kind::Cjk => {
                let start = i;
                while i < n && kinds[i] == Kind::Cjk {
                    i += 1;
                }
                out.push((start, i, true));
            }
            _ => i += 1,
        }
    }
    out
}

impl Tokenizer {
    fn kind(&self, py: Python<'_>, state: &mut State, c: char) -> PyResult<Kind> {
        if c.is_ascii() {
            return Ok(ascii_kind(c as u8));
        }
        let code = c as u32;
        if in_ranges(&self.cjk, code) {
            return Ok(Kind::Cjk);
        }
        Ok(if self.is_word_char(py, state, c)? {
            Kind::Word
        } else {
            Kind::Other
        })
    }

    fn stem(
        &self,
        py: Python<'_>,
        state: &mut State,
        stem: &Bound<'_, PyAny>,
        token: &str,
    ) -> PyResult<Py<PyString>> {
        if let Some(found) = state.stems.get(py, token) {
            return Ok(found);
        }
        let made = stem.call1((token,))?.downcast_into::<PyString>()?;
        let shared = state.share(py, made.to_str()?);
        state.stems.insert(token, shared.clone_ref(py));
        Ok(shared)
    }

    /// The final tokens of one ASCII run (`_analyse` with its filters).
    fn analyse_ascii(
        &self,
        py: Python<'_>,
        state: &mut State,
        raw: &[u8],
        options: (bool, bool, bool),
        stem: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Tokens> {
        let (drop_stopwords, split, _) = options;
        let tokens = ascii_tokens(raw, split);
        let kept: Vec<String> = if tokens.len() == 1 {
            let token = &tokens[0];
            if (drop_stopwords && self.stopwords.contains(token)) || token.len() > self.max_chars {
                return Ok(Box::new([]));
            }
            tokens
        } else {
            tokens
                .into_iter()
                .filter(|t| t.len() <= self.max_chars)
                .collect()
        };
        let mut out = Vec::with_capacity(kept.len());
        for token in &kept {
            match stem {
                Some(stem) if is_alpha(token.as_bytes()) => {
                    out.push(self.stem(py, state, stem, token)?)
                }
                _ => out.push(state.share(py, token)),
            }
        }
        Ok(out.into_boxed_slice())
    }
}

#[pymethods]
impl Tokenizer {
    #[new]
    fn new(
        stopwords: HashSet<String>,
        max_chars: usize,
        cjk: Vec<(u32, u32)>,
        is_word: Py<PyAny>,
    ) -> Self {
        Tokenizer {
            stopwords,
            max_chars,
            cjk,
            is_word,
            state: Mutex::new(State::default()),
        }
    }

    /// The tokens of `text` (already NFKC-normalised), or None when another thread is using
    /// the memo (the caller then uses the Python tokenizer, which gives the same tokens).
    /// `analyse(run)` gives the tokens of a word run with non-ASCII letters; `stem(word)`,
    /// when given, stems an ASCII alphabetic token.
    #[pyo3(signature = (text, drop_stopwords, split, bigrams, analyse, stem=None))]
    #[allow(clippy::too_many_arguments)]
    fn tokenize<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
        drop_stopwords: bool,
        split: bool,
        bigrams: bool,
        analyse: &Bound<'py, PyAny>,
        stem: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyList>>> {
        match self.tokens(py, text, (drop_stopwords, split, bigrams), analyse, stem)? {
            Some(out) => Ok(Some(PyList::new(py, out)?)),
            None => Ok(None),
        }
    }

    /// `" ".join(tokenize(...))`, without making the list (what the index stores): CJK
    /// runs are cut straight into the string and every other run's joined tokens are
    /// remembered as text, so no Python string is made per token.
    #[pyo3(signature = (text, drop_stopwords, split, bigrams, analyse, stem=None))]
    #[allow(clippy::too_many_arguments)]
    fn joined<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
        drop_stopwords: bool,
        split: bool,
        bigrams: bool,
        analyse: &Bound<'py, PyAny>,
        stem: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyString>>> {
        let Ok(text) = text.to_str() else {
            return Ok(None);
        }; // lone surrogates
        let Ok(mut state) = self.state.try_lock() else {
            return Ok(None);
        };
        let options = (drop_stopwords, split, bigrams);
        let slot = slot_of(options, stem.is_some());
        let (kinds, offsets) = self.kinds_of(py, &mut state, text)?;
        let ascii = offsets.is_empty();
        let byte = |i: usize| if ascii { i } else { offsets[i] };
        let mut out = String::with_capacity(text.len());
        let push = |out: &mut String, piece: &str| {
            if !piece.is_empty() {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(piece);
            }
        };
        for (first, end, cjk) in runs(&kinds) {
            if cjk {
                for piece in cjk_pieces(text, &byte, first, end, bigrams) {
                    push(&mut out, piece);
                }
                continue;
            }
            let raw = &text[byte(first)..byte(end)];
            if state.joined[slot].with(raw, |found| push(&mut out, found)) {
                continue;
            }
            let tokens = self.run_tokens(py, &mut state, raw, options, analyse, stem)?;
            let mut made = String::new();
            for (i, token) in tokens.iter().enumerate() {
                if i > 0 {
                    made.push(' ');
                }
                made.push_str(token.bind(py).to_str()?);
            }
            push(&mut out, &made);
            if raw.len() <= CACHEABLE_BYTES {
                state.joined[slot].insert(raw, made.into_boxed_str());
            }
        }
        drop(state);
        Ok(Some(PyString::new(py, &out)))
    }

    /// NFKC of `text`, with Python's tables: the characters `stable(c)` says NFKC keeps
    /// wherever they stand are copied, and each run of the others, with the character before
    /// it (what a run may compose with), goes through `normalize` (Python's NFKC; its
    /// answer remembered). The text itself when it has no such run; None when it holds a
    /// lone surrogate or another thread holds the state (Python normalizes it whole then).
    fn nfkc<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
        stable: &Bound<'py, PyAny>,
        normalize: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyString>>> {
        let Ok(raw) = text.to_str() else {
            return Ok(None);
        };
        let Ok(mut state) = self.state.try_lock() else {
            return Ok(None);
        };
        let mut out: Option<String> = None;
        let (mut copied, mut before, mut run) = (0usize, 0usize, None::<usize>);
        let mut close = |state: &mut State, out: &mut Option<String>, first: usize, end: usize| {
            let done = out.get_or_insert_with(|| String::with_capacity(raw.len()));
            done.push_str(&raw[copied..first]);
            let piece = &raw[first..end];
            if !state.nfkc.with(piece, |found| done.push_str(found)) {
                let made: String = normalize.call1((piece,))?.extract()?;
                done.push_str(&made);
                if piece.len() <= CACHEABLE_BYTES {
                    state.nfkc.insert(piece, made.into_boxed_str());
                }
            }
            copied = end;
            PyResult::Ok(())
        };
        for (at, c) in raw.char_indices() {
            let kept = c.is_ascii() || self.is_nfkc_stable(&mut state, c, stable)?;
            match (kept, run) {
                (true, Some(first)) => {
                    close(&mut state, &mut out, first, at)?;
                    run = None;
                }
                (false, None) => run = Some(before),
                _ => {}
            }
            if kept {
                before = at;
            }
        }
        if let Some(first) = run {
            close(&mut state, &mut out, first, raw.len())?;
        }
        drop(state);
        Ok(Some(match out {
            None => text.clone(),
            Some(mut done) => {
                done.push_str(&raw[copied..]);
                PyString::new(py, &done)
            }
        }))
    }

    /// `features.encode_features` of a block body given its joined body tokens and the
    /// tokens of its section path and path. An ASCII body needs no Unicode table; any other
    /// needs `casefold` (`str.casefold`, asked once per code point) and gets None without
    /// it, or when it holds a lone surrogate or another thread holds the memo (Python does
    /// it then).
    #[pyo3(signature = (body, tokens, rest, casefold=None))]
    fn features<'py>(
        &self,
        py: Python<'py>,
        body: &Bound<'py, PyString>,
        tokens: &str,
        rest: Vec<String>,
        casefold: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let Ok(body) = body.to_str() else {
            return Ok(None);
        };
        if body.is_ascii() {
            return Ok(Some(PyBytes::new(py, &ascii_features(body, tokens, &rest))));
        }
        let Some(casefold) = casefold else {
            return Ok(None);
        };
        let Ok(mut state) = self.state.try_lock() else {
            return Ok(None);
        };
        let (folded, ranges) = self.unicode_words(py, &mut state, body, casefold)?;
        drop(state);
        let words = ranges.iter().map(|&(a, b)| &folded[a..b]).collect();
        let flags = u8::from(has_directive(body)) | if cjk_head(body) { 2 } else { 0 };
        Ok(Some(PyBytes::new(
            py,
            &encoded(flags, tokens, &rest, words),
        )))
    }

    /// The same encoding for any body, given its flags byte and its words (Python's
    /// `\w+` over its `casefold()`): only the set algebra, sorting and joining happen here.
    fn encode<'py>(
        &self,
        py: Python<'py>,
        flags: u8,
        tokens: &str,
        rest: Vec<String>,
        words: Vec<String>,
    ) -> Bound<'py, PyBytes> {
        let words = words.iter().map(String::as_str).collect();
        PyBytes::new(py, &encoded(flags, tokens, &rest, words))
    }
}

/// The tokens of the CJK run of characters `first..end` of `text` (`byte` gives a
/// character's byte offset): its bigrams, or each character when it has one or `bigrams`
/// is off.
fn cjk_pieces<'t>(
    text: &'t str,
    byte: &'t impl Fn(usize) -> usize,
    first: usize,
    end: usize,
    bigrams: bool,
) -> impl Iterator<Item = &'t str> {
    let width = if end - first == 1 || !bigrams { 1 } else { 2 };
    (first..=end - width).map(move |i| &text[byte(i)..byte(i + width)])
}

/// The memo slot of a combination of options.
fn slot_of(options: (bool, bool, bool), stem: bool) -> usize {
    let (drop_stopwords, split, bigrams) = options;
    (drop_stopwords as usize)
        | (split as usize) << 1
        | (bigrams as usize) << 2
        | (stem as usize) << 3
}

impl Tokenizer {
    /// Each character's kind and, for a text that is not ASCII, each character's byte
    /// offset (with the text's length last); an ASCII text's offsets are empty.
    fn kinds_of(
        &self,
        py: Python<'_>,
        state: &mut State,
        text: &str,
    ) -> PyResult<(Vec<Kind>, Vec<usize>)> {
        if text.is_ascii() {
            return Ok((text.bytes().map(ascii_kind).collect(), Vec::new()));
        }
        // Sized for the bytes, an upper bound of the characters: no growth on the way.
        let mut offsets: Vec<usize> = Vec::with_capacity(text.len() + 1);
        let mut kinds = Vec::with_capacity(text.len());
        for (at, c) in text.char_indices() {
            offsets.push(at);
            kinds.push(self.kind(py, state, c)?);
        }
        offsets.push(text.len());
        Ok((kinds, offsets))
    }

    /// The tokens of one word run (not CJK): the ASCII rules here, Python's `analyse`
    /// for a run with a non-ASCII letter.
    fn run_tokens(
        &self,
        py: Python<'_>,
        state: &mut State,
        raw: &str,
        options: (bool, bool, bool),
        analyse: &Bound<'_, PyAny>,
        stem: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Tokens> {
        if raw.is_ascii() {
            return self.analyse_ascii(py, state, raw.as_bytes(), options, stem);
        }
        let made = analyse.call1((raw,))?;
        let made = made.downcast::<PyTuple>()?;
        let mut tokens = Vec::with_capacity(made.len());
        for token in made.iter() {
            tokens.push(token.downcast_into::<PyString>()?.unbind());
        }
        Ok(tokens.into_boxed_slice())
    }

    fn tokens(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyString>,
        options: (bool, bool, bool),
        analyse: &Bound<'_, PyAny>,
        stem: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<Vec<Py<PyString>>>> {
        let bigrams = options.2;
        let Ok(text) = text.to_str() else {
            return Ok(None);
        }; // lone surrogates
        let Ok(mut state) = self.state.try_lock() else {
            return Ok(None);
        };
        let slot = slot_of(options, stem.is_some());
        let (kinds, offsets) = self.kinds_of(py, &mut state, text)?;
        let ascii = offsets.is_empty();
        let byte = |i: usize| if ascii { i } else { offsets[i] };
        let mut out: Vec<Py<PyString>> = Vec::new();
        for (first, end, cjk) in runs(&kinds) {
            let raw = &text[byte(first)..byte(end)];
            if state.memos[slot].with(py, raw, |found| {
                out.extend(found.iter().map(|t| t.clone_ref(py)))
            }) {
                continue;
            }
            let tokens: Tokens = if cjk {
                cjk_pieces(text, &byte, first, end, bigrams)
                    .map(|piece| state.share(py, piece))
                    .collect()
            } else {
                self.run_tokens(py, &mut state, raw, options, analyse, stem)?
            };
            out.extend(tokens.iter().map(|t| t.clone_ref(py)));
            if raw.len() <= CACHEABLE_BYTES {
                state.memos[slot].insert(raw, tokens);
            }
        }
        drop(state);
        Ok(Some(out))
    }
}

#[pymodule]
fn scriptorium_native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("RULES", RULES)?;
    m.add_class::<Tokenizer>()?;
    m.add_class::<markdown::MarkdownLines>()?;
    m.add_class::<screen::ScreenedLines>()?;
    m.add_class::<screen::ScreenTerms>()?;
    m.add_function(wrap_pyfunction!(screen::terms_occurring, m)?)?;
    m.add_function(wrap_pyfunction!(preview::best_start_sweep, m)?)?;
    m.add_function(wrap_pyfunction!(markdown::markdown_spaces, m)?)?;
    m.add_function(wrap_pyfunction!(vectors::int8_dots, m)?)?;
    m.add_function(wrap_pyfunction!(vectors::int8_best_rows, m)?)?;
    Ok(())
}
