//! The record pipeline (a runtime that loads the example's image, [`crate::config`]): the host writes raw text records into a
//! buffer in batches and submits one parse task per slice of a batch; each parse task
//! pushes a transform task for its records, which pushes a reduce task
//! (`resident_device::nn::records` has the stages and their ordering). The ticket of a
//! batch completes when all three stages of all its records have.
//!
//! ```
//! use fused_ops::records::{RecordPipeline, encode};
//! use resident::{BackendKind, Runtime, RuntimeConfig};
//! let rt = Runtime::with_config(fused_ops::config(BackendKind::Cpu))?;
//! let p = RecordPipeline::new(&rt, 4, 10)?;
//! let lines = ["3,5\n", "3,14\n", "bad\n", "9,-2\n"];
//! p.write(0, &lines.iter().map(|l| encode(l).unwrap()).collect::<Vec<_>>())?;
//! rt.submit(&p.parse_tasks(0, 4, 2))?.wait()?;
//! let table = p.table()?;
//! assert_eq!((table[6], table[7]), (1, 5 * 3 + 3)); // key 3: 14 was dropped (divisible by 7)
//! assert_eq!((table[18], table[19]), (1, (-2i32 * 3 + 9) as u32));
//! # Ok::<(), resident::Error>(())
//! ```

use fused_ops_device::layout::{MAX_RECORDS_PER_TASK, RECORD_WORDS, RecordParse, Records, record_counts};
use resident::{Buffer, Error, Result, Runtime, Task};
use resident_device::DeviceTask;

/// One raw record: 32 bytes of ASCII, zero-padded, as eight little-endian words.
pub type RawRecord = [u32; RECORD_WORDS as usize];

/// `line` as a raw record, or `None` if it is longer than 32 bytes.
pub fn encode(line: &str) -> Option<RawRecord> {
    let b = line.as_bytes();
    if b.len() > 4 * RECORD_WORDS as usize {
        return None;
    }
    let mut bytes = [0u8; 4 * RECORD_WORDS as usize];
    bytes[..b.len()].copy_from_slice(b);
    Some(core::array::from_fn(|i| u32::from_le_bytes([bytes[4 * i], bytes[4 * i + 1], bytes[4 * i + 2], bytes[4 * i + 3]])))
}

/// Per-stage counts, read back from the device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StageCounts {
    pub parse_tasks: u32,
    pub parsed: u32,
    pub rejected: u32,
    pub transform_tasks: u32,
    pub kept: u32,
    pub dropped: u32,
    pub reduce_tasks: u32,
    pub reduced: u32,
}

/// The pipeline's buffers: `capacity` raw records, their parsed form, the stage counts,
/// and the per-key table (`[keys][2]`: count, wrapping sum of transformed values).
pub struct RecordPipeline {
    pub raw: Buffer<u32>,
    pub parsed: Buffer<u32>,
    pub counts: Buffer<u32>,
    pub table: Buffer<u32>,
    pub capacity: u32,
    pub keys: u32,
}

impl RecordPipeline {
    pub fn new(rt: &Runtime, capacity: u32, keys: u32) -> Result<Self> {
        if keys == 0 || keys > u32::MAX / 2 || capacity as u64 * RECORD_WORDS as u64 > u32::MAX as u64 {
            return Err(Error::Config("record pipeline: keys in 1..2^31, at most 2^29 records".into()));
        }
        Ok(Self {
            raw: rt.buffer(capacity as usize * RECORD_WORDS as usize)?,
            parsed: rt.buffer(capacity as usize * 2)?,
            counts: rt.buffer(record_counts::LEN)?,
            table: rt.buffer(keys as usize * 2)?,
            capacity,
            keys,
        })
    }

    /// Zeroes the stage counts and the per-key table, for another pass (synchronous
    /// copies; no task of the pipeline may be in flight).
    pub fn reset(&self) -> Result<()> {
        self.counts.write(&[0; record_counts::LEN])?;
        self.table.write(&vec![0; self.keys as usize * 2])
    }

    /// Writes raw records from record `first` on (a synchronous copy; the records must
    /// not belong to a batch in flight).
    pub fn write(&self, first: u32, records: &[RawRecord]) -> Result<()> {
        self.raw.write_at(first as usize * RECORD_WORDS as usize, records.as_flattened())
    }

    /// Parse tasks for records `first .. first + count` (cut at the capacity),
    /// `per_task` records each (at most 65,536).
    pub fn parse_tasks(&self, first: u32, count: u32, per_task: u32) -> Vec<Task> {
        let per_task = per_task.clamp(1, MAX_RECORDS_PER_TASK);
        let end = first.saturating_add(count).min(self.capacity);
        (first.min(end)..end)
            .step_by(per_task as usize)
            .map(|at| {
                RecordParse(Records {
                    raw: self.raw.handle(),
                    parsed: self.parsed.handle(),
                    counts: self.counts.handle(),
                    table: self.table.handle(),
                    first: at,
                    count: per_task.min(end - at),
                    keys: self.keys,
                })
                .task()
            })
            .collect()
    }

    pub fn counts(&self) -> Result<StageCounts> {
        let c = self.counts.read()?;
        use record_counts as k;
        Ok(StageCounts {
            parse_tasks: c[k::PARSE_TASKS],
            parsed: c[k::PARSED],
            rejected: c[k::REJECTED],
            transform_tasks: c[k::TRANSFORM_TASKS],
            kept: c[k::KEPT],
            dropped: c[k::DROPPED],
            reduce_tasks: c[k::REDUCE_TASKS],
            reduced: c[k::REDUCED],
        })
    }

    /// The per-key table: `[key * 2]` count, `[key * 2 + 1]` wrapping sum.
    pub fn table(&self) -> Result<Vec<u32>> {
        self.table.read()
    }
}
