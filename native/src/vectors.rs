//! The semantic retriever's pass over every vector (`scriptorium.semantic.scan`): the dot
//! product of a query's int8 code with each row's code. A search makes this pass once, over
//! every block of the generation, so it is the part of the retriever that grows with the corpus.
//!
//! The numpy expression in `scan.py` is the reference: both give the same integers.

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
