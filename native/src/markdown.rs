//! The line loops of `scriptorium.text.markdown`: the fenced-code spans and the heading pass.
//!
//! The Python functions are the reference; these follow their regular expressions character
//! for character. Every pattern there is ASCII except two questions, answered as Python
//! answers them: what is whitespace (`str.isspace`, `\s`: the fixed table below, which a test
//! checks against Python over every code point) and what is a decimal digit (`str.isdecimal`,
//! `\d`: asked of Python once per non-ASCII code point). A line that is not valid UTF-8 (a lone
//! surrogate) makes the whole call answer None, and the Python loop runs instead.

use pyo3::prelude::*;
use pyo3::types::PyString;
use std::collections::HashMap;
use std::sync::Mutex;

/// Python's `str.isspace` code points (Unicode White_Space plus the four separators
/// U+001C..U+001F, which Python counts and Unicode does not).
pub const PY_SPACES: &[char] = &[
    '\t', '\n', '\u{0b}', '\u{0c}', '\r', '\u{1c}', '\u{1d}', '\u{1e}', '\u{1f}', ' ', '\u{85}',
    '\u{a0}', '\u{1680}', '\u{2000}', '\u{2001}', '\u{2002}', '\u{2003}', '\u{2004}', '\u{2005}',
    '\u{2006}', '\u{2007}', '\u{2008}', '\u{2009}', '\u{200a}', '\u{2028}', '\u{2029}', '\u{202f}',
    '\u{205f}', '\u{3000}',
];

#[inline]
fn is_space(c: char) -> bool {
    if c.is_ascii() {
        matches!(
            c,
            '\t' | '\n' | '\u{0b}' | '\u{0c}' | '\r' | '\u{1c}'..='\u{1f}' | ' '
        )
    } else {
        PY_SPACES.contains(&c)
    }
}

const BLOCK_FIRST: &str = "#=-*+_>/!?<{|";

struct Lines<'a> {
    lines: Vec<&'a str>,
}

/// `_indent`: leading width, a tab to the next multiple of four.
fn indent(line: &str) -> usize {
    let b = line.as_bytes();
    if b.is_empty() || (b[0] != b' ' && b[0] != b'\t') {
        return 0;
    }
    let mut width = 0;
    for &c in b {
        match c {
            b' ' => width += 1,
            b'\t' => width += 4 - width % 4,
            _ => break,
        }
    }
    width
}

/// Leading spaces and tabs skipped (`[ \t]*`), as a byte offset.
fn skip_blank(line: &str) -> usize {
    line.bytes()
        .take_while(|&c| c == b' ' || c == b'\t')
        .count()
}

/// ` {0,3}`: the offset after the leading spaces when there are at most three, else None
/// (with four or more, the next pattern element would meet a space).
fn upto_three_spaces(line: &str) -> Option<usize> {
    let n = line.bytes().take_while(|&c| c == b' ').count();
    if n <= 3 {
        Some(n)
    } else {
        None
    }
}

fn run_of(bytes: &[u8], from: usize, c: u8) -> usize {
    bytes[from..].iter().take_while(|&&b| b == c).count()
}

fn only_blank_after(bytes: &[u8], from: usize) -> bool {
    bytes[from..].iter().all(|&b| b == b' ' || b == b'\t')
}

struct Digits<'p> {
    is_decimal: &'p Bound<'p, PyAny>,
    memo: &'p mut HashMap<char, bool>,
}

impl Digits<'_> {
    fn is_decimal(&mut self, c: char) -> PyResult<bool> {
        if c.is_ascii() {
            return Ok(c.is_ascii_digit());
        }
        if let Some(&known) = self.memo.get(&c) {
            return Ok(known);
        }
        let answer = self.is_decimal.call1((c.to_string(),))?.is_truthy()?;
        self.memo.insert(c, answer);
        Ok(answer)
    }
}

/// `[ \t]+(?=\S)` at `from`: one or more spaces or tabs, then a character that is not
/// whitespace.
fn gap_then_text(line: &str, from: usize) -> bool {
    let gap = skip_blank(&line[from..]);
    gap > 0
        && line[from + gap..]
            .chars()
            .next()
            .is_some_and(|c| !is_space(c))
}

/// `_BULLET.match(line) or _ORDERED.match(line)`.
fn list_marker(line: &str, digits: &mut Digits) -> PyResult<bool> {
    let start = skip_blank(line);
    let rest = &line[start..];
    let Some(first) = rest.chars().next() else {
        return Ok(false);
    };
    if matches!(first, '-' | '*' | '+') {
        return Ok(gap_then_text(line, start + 1));
    }
    // `\d{1,9}[.)]`
    let mut count = 0;
    let mut end = start;
    for c in rest.chars() {
        if !digits.is_decimal(c)? {
            break;
        }
        count += 1;
        end += c.len_utf8();
        if count > 9 {
            return Ok(false);
        }
    }
    if count == 0 {
        return Ok(false);
    }
    let bytes = line.as_bytes();
    if end < bytes.len() && (bytes[end] == b'.' || bytes[end] == b')') {
        return Ok(gap_then_text(line, end + 1));
    }
    Ok(false)
}

/// `_FENCE_OPEN`: the fence character, the run's length and whether a backtick follows it.
fn fence_open(line: &str) -> Option<(u8, usize, bool)> {
    let b = line.as_bytes();
    let at = skip_blank(line);
    let c = *b.get(at)?;
    if c != b'`' && c != b'~' {
        return None;
    }
    let n = run_of(b, at, c);
    if n < 3 {
        return None;
    }
    Some((c, n, b[at + n..].contains(&b'`')))
}

/// `_FENCE_CLOSE`: the fence character and the run's length.
fn fence_close(line: &str) -> Option<(u8, usize)> {
    let b = line.as_bytes();
    let at = skip_blank(line);
    let c = *b.get(at)?;
    if c != b'`' && c != b'~' {
        return None;
    }
    let n = run_of(b, at, c);
    if n < 3 || !only_blank_after(b, at + n) {
        return None;
    }
    Some((c, n))
}

fn is_blank(line: &str) -> bool {
    line.chars().all(is_space)
}

impl Lines<'_> {
    fn fenced_spans(&self, digits: &mut Digits) -> PyResult<Vec<(usize, usize)>> {
        let mut spans = Vec::new();
        let mut opened: Option<(usize, u8, usize, usize)> = None;
        let mut in_list = false;
        let mut after_blank = false;
        for (index, &line) in self.lines.iter().enumerate() {
            match opened {
                None => {
                    let first = line[skip_blank(line)..].chars().next();
                    if first == Some('`') || first == Some('~') {
                        if let Some((c, n, tick_after)) = fence_open(line) {
                            let width = indent(line);
                            if (width <= 3 || in_list) && (c != b'`' || !tick_after) {
                                opened = Some((index, c, n, width));
                                continue;
                            }
                        }
                    }
                    if is_blank(line) {
                        after_blank = true;
                        continue;
                    }
                    let listy = match first {
                        Some(c) => matches!(c, '-' | '*' | '+') || digits.is_decimal(c)?,
                        None => false,
                    };
                    if listy {
                        if list_marker(line, digits)? {
                            in_list = true;
                        } else if after_blank && indent(line) < 2 {
                            in_list = false;
                        }
                    } else if after_blank && indent(line) < 2 {
                        in_list = false;
                    }
                    after_blank = false;
                }
                Some((start, c, n, width)) => {
                    if let Some((close_c, close_n)) = fence_close(line) {
                        if close_c == c && close_n >= n && indent(line) <= 3.max(width + 3) {
                            spans.push((start, index));
                            opened = None;
                            after_blank = false;
                        }
                    }
                }
            }
        }
        if let Some((start, ..)) = opened {
            spans.push((start, self.lines.len() - 1));
        }
        Ok(spans)
    }
}

/// `_THEMATIC`: three or more of one of `-*_`, with spaces and tabs between, nothing else.
fn thematic(line: &str) -> bool {
    let Some(at) = upto_three_spaces(line) else {
        return false;
    };
    let b = line.as_bytes();
    let Some(&c) = b.get(at) else {
        return false;
    };
    if c != b'-' && c != b'*' && c != b'_' {
        return false;
    }
    let mut count = 0;
    for &x in &b[at..] {
        if x == c {
            count += 1;
        } else if x != b' ' && x != b'\t' {
            return false;
        }
    }
    count >= 3
}

/// `_BLOCK_START`.
fn block_start(line: &str) -> bool {
    let Some(at) = upto_three_spaces(line) else {
        return false;
    };
    let rest = &line.as_bytes()[at..];
    match rest.first() {
        Some(b'>') => true,
        Some(b'<') => rest
            .get(1)
            .is_some_and(|&c| c.is_ascii_alphabetic() || c == b'/' || c == b'!'),
        _ => rest.starts_with(b"///") || rest.starts_with(b"!!!") || rest.starts_with(b"???"),
    }
}

/// `_NON_PROSE`.
fn non_prose(line: &str) -> bool {
    let rest = line.trim_start_matches(is_space);
    let b = rest.as_bytes();
    if b.starts_with(b"///")
        || b.starts_with(b"!!!")
        || b.starts_with(b"???")
        || b.starts_with(b"{*")
        || b.starts_with(b"{!")
        || b.starts_with(b"|")
    {
        return true;
    }
    // `!\[[^\]]*\]\([^)]*\)\s*$`
    if !b.starts_with(b"![") {
        return false;
    }
    let Some(close) = rest[2..].find(']') else {
        return false;
    };
    let after = &rest[2 + close + 1..];
    if !after.starts_with('(') {
        return false;
    }
    let Some(paren) = after[1..].find(')') else {
        return false;
    };
    after[1 + paren + 1..].chars().all(is_space)
}

/// `_ATX`: the level and the text after the hashes.
fn atx(line: &str) -> Option<(usize, &str)> {
    let at = upto_three_spaces(line)?;
    let b = line.as_bytes();
    let n = run_of(b, at, b'#');
    if n == 0 || n > 6 {
        return None;
    }
    match b.get(at + n) {
        None | Some(b' ') | Some(b'\t') => Some((n, &line[at + n..])),
        _ => None,
    }
}

/// `_SETEXT`: the level its underline gives.
fn setext(line: &str) -> Option<usize> {
    let at = upto_three_spaces(line)?;
    let b = line.as_bytes();
    let c = *b.get(at)?;
    if c != b'=' && c != b'-' {
        return None;
    }
    let n = run_of(b, at, c);
    if !only_blank_after(b, at + n) {
        return None;
    }
    Some(if c == b'=' { 1 } else { 2 })
}

enum Mark<'a> {
    Atx(usize, usize, &'a str),
    Setext(usize, usize, usize),
}

impl<'a> Lines<'a> {
    fn heading_marks(&self, mask: &[bool], digits: &mut Digits) -> PyResult<Vec<Mark<'a>>> {
        let mut marks = Vec::new();
        let mut para: Option<usize> = None;
        let mut in_list = false;
        for (index, &line) in self.lines.iter().enumerate() {
            if mask[index] {
                para = None;
                in_list = false;
                continue;
            }
            let Some(first) = line.trim_start_matches(is_space).chars().next() else {
                para = None;
                in_list = false;
                continue;
            };
            if !BLOCK_FIRST.contains(first) && !digits.is_decimal(first)? {
                if para.is_none() && !in_list {
                    para = if indent(line) >= 4 { None } else { Some(index) };
                }
                continue;
            }
            if let Some((level, text)) = atx(line) {
                marks.push(Mark::Atx(index, level, text));
                para = None;
                in_list = false;
                continue;
            }
            if let (Some(level), Some(start), false) = (setext(line), para, in_list) {
                marks.push(Mark::Setext(index, level, start));
                para = None;
                continue;
            }
            if list_marker(line, digits)? && indent(line) <= 3 {
                para = None;
                in_list = true;
                continue;
            }
            if in_list {
                continue;
            }
            if thematic(line) || block_start(line) || non_prose(line) {
                para = None;
                continue;
            }
            if para.is_none() {
                para = if indent(line) >= 4 { None } else { Some(index) };
            }
        }
        Ok(marks)
    }
}

/// The line loops, with Python's `str.isdecimal` for non-ASCII digits (memoised).
#[pyclass(frozen)]
pub struct MarkdownLines {
    is_decimal: Py<PyAny>,
    memo: Mutex<HashMap<char, bool>>,
}

impl MarkdownLines {
    /// `run` over the lines as text, with the memoised digit test; None when a line is not
    /// valid UTF-8 or another thread holds the memo (the caller then runs the Python loops).
    fn over_lines<'l, R>(
        &self,
        py: Python<'_>,
        lines: &'l [Bound<'_, PyString>],
        run: impl FnOnce(Lines<'l>, &mut Digits) -> PyResult<R>,
    ) -> PyResult<Option<R>> {
        let Some(texts) = lines
            .iter()
            .map(|line| line.to_str().ok())
            .collect::<Option<Vec<_>>>()
        else {
            return Ok(None);
        };
        let is_decimal = self.is_decimal.bind(py);
        let Ok(mut memo) = self.memo.try_lock() else {
            return Ok(None);
        };
        let mut digits = Digits {
            is_decimal,
            memo: &mut memo,
        };
        run(Lines { lines: texts }, &mut digits).map(Some)
    }
}

#[pymethods]
impl MarkdownLines {
    #[new]
    fn new(is_decimal: Py<PyAny>) -> Self {
        MarkdownLines {
            is_decimal,
            memo: Mutex::new(HashMap::new()),
        }
    }

    /// `fenced_code_spans(lines)`, or None when a line is not valid UTF-8.
    fn fenced_code_spans(
        &self,
        py: Python<'_>,
        lines: Vec<Bound<'_, PyString>>,
    ) -> PyResult<Option<Vec<(usize, usize)>>> {
        self.over_lines(py, &lines, |lines, digits| lines.fenced_spans(digits))
    }

    /// The heading pass of `_parse_headings`: `(row, level, text)` for an ATX heading (the text
    /// after its hashes) and `(row, level, first_row)` for a setext one, or None when a line is
    /// not valid UTF-8.
    fn heading_marks(
        &self,
        py: Python<'_>,
        lines: Vec<Bound<'_, PyString>>,
        mask: Vec<bool>,
    ) -> PyResult<Option<Vec<PyObject>>> {
        let Some(marks) = self.over_lines(py, &lines, |lines, digits| {
            lines.heading_marks(&mask, digits)
        })?
        else {
            return Ok(None);
        };
        let mut out = Vec::with_capacity(marks.len());
        for mark in marks {
            out.push(match mark {
                Mark::Atx(row, level, text) => {
                    (row, level, text).into_pyobject(py)?.into_any().unbind()
                }
                Mark::Setext(row, level, start) => {
                    (row, level, start).into_pyobject(py)?.into_any().unbind()
                }
            });
        }
        Ok(Some(out))
    }
}

/// `PY_SPACES` as a string, for the test that checks it against Python.
#[pyfunction]
pub fn markdown_spaces() -> String {
    PY_SPACES.iter().collect()
}
