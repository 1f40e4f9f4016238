//! The record pipeline's three stages, each a task that pushes the next stage's task for
//! the same records onto the device (`TaskCx::spawn`), so a batch submitted by the
//! host flows parse → transform → reduce with no host round trip:
//! 1. parse: `"<key>,<value>\n"` (32 ASCII bytes, zero-padded) into `(key, value)`;
//!    malformed records, or keys `>= keys`, are rejected (key [`NO_KEY`]);
//! 2. transform: drops values divisible by 7, maps the rest to
//!    `value * 3 + key` (wrapping, as `u32`);
//! 3. reduce: per key, adds one to its count and the transformed value to its sum
//!    (wrapping `u32` atomics: exact, whatever the order).
//!
//! Every stage adds its task count and its record counts to the counts buffer
//! (`crate::layout::record_counts`), so the host checks each stage exactly.
//!
//! Ordering between stages: every lane's writes of the parsed buffer, then
//! `bar.warp.sync`, then lane 0's push, whose release store (`st.release.gpu` of the
//! slot's sequence word, `crate::spawn`) pairs with the popper's acquire in every lane:
//! the next stage sees this stage's writes.

use crate::layout::{self, MAX_RECORDS_PER_TASK, NO_KEY, RECORD_WORDS, RecordParse, RecordReduce, RecordTransform, record_counts, whole};
use resident_device::{ArgError, Declare, Status, TaskId};

use super::math::warp_sum_u32;
use resident_device::{DeviceTask, TaskCx, arch};

/// Buffers and range of a pipeline task.
struct Records {
    raw: *const u32,
    parsed: *mut u32,
    counts: *mut u32,
    table: *mut u32,
    first: u32,
    count: u32,
    keys: u32,
}

/// The checks of the records' arguments, shared by the host's declaration and the
/// device's resolution: the end of the records and the table's length.
#[inline(always)]
fn lengths(a: &layout::Records) -> Option<(u32, u32)> {
    let end = a.first as u64 + a.count as u64;
    if a.count > MAX_RECORDS_PER_TASK || a.keys == 0 || a.keys > u32::MAX / 2 || end * RECORD_WORDS as u64 > u32::MAX as u64 {
        return None;
    }
    Some((end as u32, a.keys * 2))
}

/// What every stage declares: all four buffers (a stage's children touch the same).
fn declare(a: &layout::Records, d: &mut Declare<'_>, next: Option<TaskId>) -> Result<(), ArgError> {
    let (end, table) = lengths(a).ok_or(ArgError::Bad("records: at most 65536 per task, keys in 1..2^31, buffers below 2^32 words"))?;
    d.read(whole::<u32>(a.raw, end * RECORD_WORDS));
    d.write(whole::<u32>(a.parsed, end * 2));
    d.atomic(whole::<u32>(a.counts, record_counts::LEN as u32));
    d.atomic(whole::<u32>(a.table, table));
    if let Some(id) = next {
        d.spawns(id);
    }
    Ok(())
}

/// The four buffers' views, checked (the pointers are the views' own).
#[inline(always)]
fn resolve(a: &layout::Records, cx: &TaskCx) -> Result<Records, Status> {
    let (end, table) = lengths(a).ok_or(Status::BadArgs)?;
    let [raw, parsed, counts, table] = cx.views([
        whole::<u32>(a.raw, end * RECORD_WORDS),
        whole(a.parsed, end * 2),
        whole(a.counts, record_counts::LEN as u32),
        whole(a.table, table),
    ])?;
    Ok(Records {
        raw: raw.as_ptr(),
        parsed: parsed.as_mut_ptr()?,
        counts: counts.as_atomic_ptr()?,
        table: table.as_atomic_ptr()?,
        first: a.first,
        count: a.count,
        keys: a.keys,
    })
}

/// Parses one record; `None` if malformed or its key is out of range.
#[inline(always)]
pub fn parse_record(words: &[u32; RECORD_WORDS as usize], keys: u32) -> Option<(u32, u32)> {
    let byte = |i: usize| (words[i / 4] >> (8 * (i % 4))) as u8;
    let mut i = 0;
    let mut key: u32 = 0;
    while i < 6 && byte(i).is_ascii_digit() {
        key = key * 10 + (byte(i) - b'0') as u32;
        i += 1;
    }
    if i == 0 || i > 5 || byte(i) != b',' {
        return None;
    }
    i += 1;
    let negative = byte(i) == b'-';
    if negative {
        i += 1;
    }
    let start = i;
    let mut value: i64 = 0;
    while i < start + 10 && i < 4 * RECORD_WORDS as usize && byte(i).is_ascii_digit() {
        value = value * 10 + (byte(i) - b'0') as i64;
        i += 1;
    }
    if i == start || i - start > 9 || i >= 4 * RECORD_WORDS as usize || byte(i) != b'\n' || key >= keys {
        return None;
    }
    let value = if negative { -value } else { value };
    Some((key, value as i32 as u32))
}

/// Stage 2's map: `None` (dropped) for values divisible by 7.
#[inline(always)]
pub fn transform(key: u32, value: u32) -> Option<u32> {
    if (value as i32) % 7 == 0 { None } else { Some(value.wrapping_mul(3).wrapping_add(key)) }
}

/// Lane 0 adds the warp's totals to the counts.
///
/// # Safety
/// `counts` must hold `record_counts::LEN` words.
#[inline(always)]
unsafe fn count(counts: *mut u32, tasks_at: usize, a_at: usize, a: u32, b_at: usize, b: u32) {
    let (a, b) = (warp_sum_u32(a), warp_sum_u32(b));
    if arch::lane_id() == 0 {
        // Relaxed, .gpu: counters, published to the host by the completion's release.
        unsafe {
            arch::atom_add_relaxed_gpu(counts.add(tasks_at), 1);
            arch::atom_add_relaxed_gpu(counts.add(a_at), a);
            arch::atom_add_relaxed_gpu(counts.add(b_at), b);
        }
    }
}

/// Pushes the next stage for the same records, after every lane's writes.
#[inline(always)]
fn next<C: DeviceTask>(cx: &TaskCx, child: &C) -> Result<(), Status> {
    // Every lane's stores of this stage before lane 0's release in the push.
    arch::syncwarp();
    cx.spawn(child)
}

impl DeviceTask for RecordParse {
    const ID: TaskId = layout::ids::RECORD_PARSE;
    fn declare(&self, d: &mut Declare<'_>) -> Result<(), ArgError> {
        declare(&self.0, d, Some(RecordTransform::ID))
    }
    #[inline(never)]
    fn run(&self, cx: &TaskCx) -> Result<u64, Status> {
        let r = resolve(&self.0, cx)?;
        let (mut ok, mut bad) = (0u32, 0u32);
        let mut i = arch::lane_id();
        while i < r.count {
            let rec = (r.first + i) as usize;
            // SAFETY: `rec < first + count = end`; the views hold `end` records.
            let words: [u32; RECORD_WORDS as usize] = core::array::from_fn(|w| unsafe { *r.raw.add(rec * RECORD_WORDS as usize + w) });
            let (key, value) = match parse_record(&words, r.keys) {
                Some(kv) => {
                    ok += 1;
                    kv
                }
                None => {
                    bad += 1;
                    (NO_KEY, 0)
                }
            };
            unsafe {
                *r.parsed.add(2 * rec) = key;
                *r.parsed.add(2 * rec + 1) = value;
            }
            i += arch::WARP;
        }
        unsafe { count(r.counts, record_counts::PARSE_TASKS, record_counts::PARSED, ok, record_counts::REJECTED, bad) };
        next(cx, &RecordTransform(self.0))?;
        Ok(r.count as u64)
    }
}

impl DeviceTask for RecordTransform {
    const ID: TaskId = layout::ids::RECORD_TRANSFORM;
    fn declare(&self, d: &mut Declare<'_>) -> Result<(), ArgError> {
        declare(&self.0, d, Some(RecordReduce::ID))
    }
    #[inline(never)]
    fn run(&self, cx: &TaskCx) -> Result<u64, Status> {
        let r = resolve(&self.0, cx)?;
        let (mut kept, mut dropped) = (0u32, 0u32);
        let mut i = arch::lane_id();
        while i < r.count {
            let rec = (r.first + i) as usize;
            // SAFETY: as in the parse stage.
            let key = unsafe { *r.parsed.add(2 * rec) };
            if key != NO_KEY {
                match transform(key, unsafe { *r.parsed.add(2 * rec + 1) }) {
                    Some(v) => {
                        kept += 1;
                        unsafe { *r.parsed.add(2 * rec + 1) = v };
                    }
                    None => {
                        dropped += 1;
                        unsafe { *r.parsed.add(2 * rec) = NO_KEY };
                    }
                }
            }
            i += arch::WARP;
        }
        unsafe { count(r.counts, record_counts::TRANSFORM_TASKS, record_counts::KEPT, kept, record_counts::DROPPED, dropped) };
        next(cx, &RecordReduce(self.0))?;
        Ok(r.count as u64)
    }
}

impl DeviceTask for RecordReduce {
    const ID: TaskId = layout::ids::RECORD_REDUCE;
    fn declare(&self, d: &mut Declare<'_>) -> Result<(), ArgError> {
        declare(&self.0, d, None)
    }
    #[inline(never)]
    fn run(&self, cx: &TaskCx) -> Result<u64, Status> {
        let r = resolve(&self.0, cx)?;
        let mut reduced = 0u32;
        let mut i = arch::lane_id();
        while i < r.count {
            let rec = (r.first + i) as usize;
            // SAFETY: as in the parse stage; `key < keys`, the table holds `2 * keys`.
            let key = unsafe { *r.parsed.add(2 * rec) };
            if key < r.keys {
                reduced += 1;
                // Relaxed, .gpu: commutative counters, published by the completion.
                unsafe {
                    arch::atom_add_relaxed_gpu(r.table.add(2 * key as usize), 1);
                    arch::atom_add_relaxed_gpu(r.table.add(2 * key as usize + 1), *r.parsed.add(2 * rec + 1));
                }
            }
            i += arch::WARP;
        }
        unsafe { count(r.counts, record_counts::REDUCE_TASKS, record_counts::REDUCED, reduced, record_counts::REDUCED, 0) };
        Ok(r.count as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> [u32; 8] {
        let mut b = [0u8; 32];
        b[..s.len()].copy_from_slice(s.as_bytes());
        core::array::from_fn(|i| u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]))
    }

    #[test]
    fn parses_good_records_and_rejects_bad_ones() {
        assert_eq!(parse_record(&words("12,345\n"), 100), Some((12, 345)));
        assert_eq!(parse_record(&words("0,-7\n"), 1), Some((0, (-7i32) as u32)));
        assert_eq!(parse_record(&words("99999,999999999\n"), 100_000), Some((99_999, 999_999_999)));
        for bad in ["", ",1\n", "1,\n", "1,2", "1;2\n", "123456,1\n", "1,1234567890\n", "5,1\n", "1,-\n", "a,1\n", "1,2x\n"] {
            assert_eq!(parse_record(&words(bad), 5), None, "{bad:?}");
        }
    }
}
