//! The semantic retriever's pass over every vector (`scriptorium.semantic.scan`): the dot
//! product of a query's int8 code with each row's code. A search makes this pass once, over
//! every block of the generation, so it is the part of the retriever that grows with the corpus.
//!
//! The numpy expression in `scan.py` is the reference: both give the same integers, and
//! `best_rows` the same rows as its choice from the scaled scores.

use std::cmp::Ordering;

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

#[inline(always)]
fn dot(row: &[i8], query: &[i8]) -> i32 {
    row.iter()
        .zip(query)
        .map(|(&a, &b)| i32::from(a) * i32::from(b))
        .sum()
}

#[inline(always)]
fn dots_with(codes: &[i8], query: &[i8], out: &mut [i32]) {
    for (row, slot) in codes.chunks_exact(query.len()).zip(out.iter_mut()) {
        *slot = dot(row, query);
    }
}

/// The same loop compiled for AVX2 (twice the lanes of the baseline's SSE2).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn dots_avx2(codes: &[i8], query: &[i8], out: &mut [i32]) {
    dots_with(codes, query, out)
}

/// The dot products 32 bytes at a time with AVX2's byte multiply-add: each row byte's
/// magnitude times the query byte carrying the row byte's sign, pairs summed into 16 bits,
/// then into 32. Exact (the same integers as `dot`) when no query byte is -128: a pair is
/// then at most 2 × 128 × 127 = 32,512, inside 16 bits (a row byte of -128 has the magnitude
/// 128 as an unsigned byte), and negating a query byte never wraps. The caller checks the
/// query (`scan.query_code` makes none: its peak is 127).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn dots_madd(codes: &[i8], query: &[i8], out: &mut [i32]) {
    use std::arch::x86_64::*;
    let dims = query.len();
    let wide = dims - dims % 32;
    let ones = _mm256_set1_epi16(1);
    for (row, slot) in codes.chunks_exact(dims).zip(out.iter_mut()) {
        let mut sums = _mm256_setzero_si256();
        let mut at = 0;
        while at < wide {
            // SAFETY: `at + 32 <= wide <= dims`, the length of both slices.
            let a = _mm256_loadu_si256(row.as_ptr().add(at) as *const __m256i);
            let b = _mm256_loadu_si256(query.as_ptr().add(at) as *const __m256i);
            let pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(a, a), _mm256_sign_epi8(b, a));
            sums = _mm256_add_epi32(sums, _mm256_madd_epi16(pairs, ones));
            at += 32;
        }
        let halves = _mm_add_epi32(
            _mm256_castsi256_si128(sums),
            _mm256_extracti128_si256(sums, 1),
        );
        let pairs = _mm_add_epi32(halves, _mm_shuffle_epi32(halves, 0b01_00_11_10));
        let total = _mm_add_epi32(pairs, _mm_shuffle_epi32(pairs, 0b10_11_00_01));
        *slot = _mm_cvtsi128_si32(total) + dot(&row[wide..], &query[wide..]);
    }
}

fn dots(codes: &[i8], query: &[i8], out: &mut [i32]) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        if !query.contains(&i8::MIN) {
            // SAFETY: the CPU has just been found to support AVX2, and the query holds no
            // -128 (see `dots_madd`).
            unsafe { dots_madd(codes, query, out) };
        } else {
            // SAFETY: the CPU has just been found to support AVX2.
            unsafe { dots_avx2(codes, query, out) };
        }
        return;
    }
    dots_with(codes, query, out)
}

/// `out[i]` = the dot product of row `i` of `codes` (C-contiguous int8, rows as long as
/// `query`) with `query` (int8), as int32. The scan runs without the GIL.
#[pyfunction]
pub fn int8_dots(
    py: Python<'_>,
    codes: PyBuffer<i8>,
    query: PyBuffer<i8>,
    out: PyBuffer<i32>,
) -> PyResult<()> {
    let dims = query.item_count();
    let rows = out.item_count();
    if !(codes.is_c_contiguous() && query.is_c_contiguous() && out.is_c_contiguous()) {
        return Err(PyValueError::new_err("int8_dots takes contiguous arrays"));
    }
    if out.readonly() {
        return Err(PyValueError::new_err(
            "int8_dots writes into a writable int32 array",
        ));
    }
    if dims == 0 || codes.item_count() != rows * dims {
        return Err(PyValueError::new_err(format!(
            "int8_dots: {} codes are not {} rows of {} (the query's length)",
            codes.item_count(),
            rows,
            dims
        )));
    }
    // The buffers stay held (and so alive and unmoved) until this function returns; their
    // addresses cross into the GIL-free closure as integers.
    let (codes_at, query_at, out_at) = (
        codes.buf_ptr() as usize,
        query.buf_ptr() as usize,
        out.buf_ptr() as usize,
    );
    py.allow_threads(|| {
        // SAFETY: each pointer is the start of a contiguous buffer of the length checked
        // above, and `out` is writable and not shared with these inputs' items.
        let codes = unsafe { std::slice::from_raw_parts(codes_at as *const i8, rows * dims) };
        let query = unsafe { std::slice::from_raw_parts(query_at as *const i8, dims) };
        let out = unsafe { std::slice::from_raw_parts_mut(out_at as *mut i32, rows) };
        dots(codes, query, out);
    });
    Ok(())
}

/// A row's approximate score (its dot product times its scale, in f64 as numpy's int32 ×
/// float32 gives it), ordered by score, then by lower row first (a fixed answer where scores tie).
#[derive(Clone, Copy)]
struct Scored {
    score: f64,
    row: u32,
}

impl Ord for Scored {
    fn cmp(&self, other: &Self) -> Ordering {
        self.score
            .total_cmp(&other.score)
            .then_with(|| other.row.cmp(&self.row))
    }
}

impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Scored {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Scored {}

/// The best `count` rows offered so far. Rows better than the bar (the worst of the last
/// trim's best `count`) are gathered, and trimmed to the best `count` when twice as many are
/// held: amortised linear, where a heap pays a sift for most rows of a small corpus.
struct Best {
    count: usize,
    kept: Vec<Scored>,
    bar: Option<Scored>,
}

impl Best {
    fn new(count: usize) -> Self {
        Best {
            count,
            kept: Vec::with_capacity(Self::held(count)),
            bar: None,
        }
    }

    /// How many rows are gathered before a trim: twice the rows kept (at least 64).
    fn held(count: usize) -> usize {
        2 * count.max(32)
    }

    #[inline(always)]
    fn offer(&mut self, scored: Scored) {
        if self.bar.is_some_and(|bar| scored <= bar) {
            return;
        }
        self.kept.push(scored);
        if self.kept.len() >= Self::held(self.count) {
            self.trim();
        }
    }

    /// Offers the rows of one chunk (the first is row `start`) that are of `corpus` (None:
    /// any with a vector): a row below the bar or of another corpus costs one branch, taken
    /// rarely once `count` are kept.
    fn offer_chunk(&mut self, corpus: Option<u8>, start: usize, scores: &[f64], corpora: &[u8]) {
        let mut bar = self.bar.map_or(f64::NEG_INFINITY, |bar| bar.score);
        for (at, (&score, &of)) in scores.iter().zip(corpora).enumerate() {
            // `&`, not `&&`: the corpus test is no branch of its own (corpora interleave).
            let of_corpus = corpus.map_or(of != NO_CORPUS, |c| c == of);
            if !((score >= bar) & of_corpus) {
                continue;
            }
            self.offer(Scored {
                score,
                row: (start + at) as u32,
            });
            bar = self.bar.map_or(f64::NEG_INFINITY, |bar| bar.score);
        }
    }

    fn trim(&mut self) {
        if self.count == 0 {
            self.kept.clear();
        } else if self.kept.len() > self.count {
            // The best first: everything before the `count`-th is better than it.
            self.kept
                .select_nth_unstable_by(self.count - 1, |a, b| b.cmp(a));
            self.kept.truncate(self.count);
            self.bar = self.kept.last().copied();
        }
    }

    fn rows(mut self) -> Vec<u32> {
        self.trim();
        let mut rows: Vec<u32> = self.kept.iter().map(|s| s.row).collect();
        rows.sort_unstable();
        rows
    }
}

// Rows scored at a time: a stack buffer of dot products and one of scores, then the choice.
const CHUNK: usize = 2048;
// The corpus byte of a row without a vector (`vectors.NONE`).
const NO_CORPUS: u8 = 255;
// Rows from which the pass is split between two threads. Starting the thread costs about
// what half the pass over 23,000 rows takes (0.34 ms either way), so below this bound the
// pass stays whole. Split, 36,000 rows take 0.44-0.48 ms against 0.54-0.63, 61,000 rows
// 0.62-0.82 against 1.38-1.47, 120,000 rows 1.63-1.77 against 2.96-2.99 (journal
// 2026-12-06, static encoder and vector pass).
const SPLIT_ROWS: usize = 32_768;

/// One search's pass: the codes and what is asked of them.
#[derive(Clone, Copy)]
struct Pass<'a> {
    codes: &'a [i8],
    query: &'a [i8],
    scales: &'a [f32],
    corpora: &'a [u8],
    wanted: &'a [Option<u8>],
    count: usize,
}

fn best_rows(pass: Pass<'_>) -> Vec<Vec<u32>> {
    let rows = pass.scales.len();
    let split = rows >= SPLIT_ROWS
        && pass.count > 0
        && std::thread::available_parallelism().is_ok_and(|cores| cores.get() > 1);
    let kept = if split {
        // The second half on a thread of its own; the halves' best are merged below. The
        // order of (score, lower row) is total, so the best `count` of the two halves' best
        // are the best `count` of all: the same rows as one pass.
        let middle = (rows / 2).div_ceil(CHUNK) * CHUNK;
        let second_half = || pass.best_in(middle, rows);
        let (first, second) = std::thread::scope(|scope| {
            // A thread the system refuses (a process at its thread limit) leaves the second
            // half to this one: slower, never a failed search.
            let spawned = std::thread::Builder::new().spawn_scoped(scope, second_half);
            let first = pass.best_in(0, middle);
            let second = match spawned {
                Ok(thread) => thread.join().expect("the second half of the pass panicked"),
                Err(_) => second_half(),
            };
            (first, second)
        });
        first
            .into_iter()
            .zip(second)
            .map(|(mut one, other)| {
                for scored in other.kept {
                    one.offer(scored);
                }
                one
            })
            .collect()
    } else {
        pass.best_in(0, rows)
    };
    kept.into_iter().map(Best::rows).collect()
}

impl Pass<'_> {
    /// The best rows of each corpus of `wanted` among rows `[low, high)`, as row numbers of
    /// the whole array.
    fn best_in(&self, low: usize, high: usize) -> Vec<Best> {
        let dims = self.query.len();
        let mut kept: Vec<Best> = self.wanted.iter().map(|_| Best::new(self.count)).collect();
        let mut dots_of = [0i32; CHUNK];
        let mut scores_of = [0f64; CHUNK];
        if self.count > 0 {
            for start in (low..high).step_by(CHUNK) {
                let end = (start + CHUNK).min(high);
                let (dots_of, scores_of) =
                    (&mut dots_of[..end - start], &mut scores_of[..end - start]);
                dots(&self.codes[start * dims..end * dims], self.query, dots_of);
                for ((score, &dot), &scale) in scores_of
                    .iter_mut()
                    .zip(&*dots_of)
                    .zip(&self.scales[start..end])
                {
                    *score = f64::from(dot) * f64::from(scale);
                }
                for (which, best) in self.wanted.iter().zip(kept.iter_mut()) {
                    best.offer_chunk(*which, start, scores_of, &self.corpora[start..end]);
                }
            }
        }
        kept
    }
}

/// For each corpus of `wanted` (a corpus byte, or None for any row that has one), the rows
/// (ascending) of the `count` best approximate scores among that corpus's rows: the dot
/// product of each row's code with `query`, times the row's scale. Corpus `i`'s rows are
/// written from `out[i * count]` (int64), and its number of rows returned. One pass over the
/// codes serves every corpus; it runs without the GIL.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn int8_best_rows(
    py: Python<'_>,
    codes: PyBuffer<i8>,
    query: PyBuffer<i8>,
    scales: PyBuffer<f32>,
    corpora: PyBuffer<u8>,
    wanted: Vec<Option<u8>>,
    count: usize,
    out: PyBuffer<i64>,
) -> PyResult<Vec<usize>> {
    let dims = query.item_count();
    let rows = scales.item_count();
    let buffers_ok = codes.is_c_contiguous()
        && query.is_c_contiguous()
        && scales.is_c_contiguous()
        && corpora.is_c_contiguous()
        && out.is_c_contiguous();
    if !buffers_ok || out.readonly() {
        return Err(PyValueError::new_err(
            "int8_best_rows takes contiguous arrays and a writable int64 out",
        ));
    }
    if dims == 0 || codes.item_count() != rows * dims || corpora.item_count() != rows {
        return Err(PyValueError::new_err(format!(
            "int8_best_rows: {} codes and {} corpus bytes are not {} rows of {} (the query's length)",
            codes.item_count(),
            corpora.item_count(),
            rows,
            dims
        )));
    }
    if out.item_count() != wanted.len() * count || rows > u32::MAX as usize {
        return Err(PyValueError::new_err(format!(
            "int8_best_rows: out holds {} rows, not {} corpora of {} (or over 2^32 rows)",
            out.item_count(),
            wanted.len(),
            count
        )));
    }
    let (codes_at, query_at, scales_at, corpora_at, out_at) = (
        codes.buf_ptr() as usize,
        query.buf_ptr() as usize,
        scales.buf_ptr() as usize,
        corpora.buf_ptr() as usize,
        out.buf_ptr() as usize,
    );
    let counts = py.allow_threads(|| {
        // SAFETY: each pointer is the start of a contiguous buffer of the length checked
        // above; the buffers stay held (alive and unmoved) until this function returns, and
        // `out` is writable and not one of the inputs.
        let codes = unsafe { std::slice::from_raw_parts(codes_at as *const i8, rows * dims) };
        let query = unsafe { std::slice::from_raw_parts(query_at as *const i8, dims) };
        let scales = unsafe { std::slice::from_raw_parts(scales_at as *const f32, rows) };
        let corpora = unsafe { std::slice::from_raw_parts(corpora_at as *const u8, rows) };
        let out =
            unsafe { std::slice::from_raw_parts_mut(out_at as *mut i64, wanted.len() * count) };
        let best = best_rows(Pass {
            codes,
            query,
            scales,
            corpora,
            wanted: &wanted,
            count,
        });
        for (rows, slots) in best.iter().zip(out.chunks_mut(count.max(1))) {
            for (row, slot) in rows.iter().zip(slots.iter_mut()) {
                *slot = i64::from(*row);
            }
        }
        best.iter().map(Vec::len).collect()
    });
    Ok(counts)
}
