//! Argument layouts of the example's task types (ids `0x100..=0x104`, [`ids`]): a conv
//! tile that also computes per-channel partial statistics, the batch-norm normalize
//! step, and the three stages of the record pipeline; and the shape arithmetic the host
//! and the device share. The device code is in this crate's other modules; the host
//! builds these tasks in the `fused-ops` crate.
//!
//! Buffers are named by handle alone: each task uses its buffers from element 0, with
//! the length its geometry implies, which both the host (at submit) and the device
//! (before any access) check against the buffer table.

use bytemuck::{Pod, Zeroable};

use resident_device::shared::BufferHandle;

/// Kernel side of the 3×3 convolution (stride 1, zero padding 1: output size = input).
pub const CONV_K: u32 = 3;
/// Output channels one conv tile computes (`c_out` must be a multiple).
pub const CONV_COB: u32 = 8;
/// Output pixels per lane of a conv tile.
pub const CONV_PX: u32 = 4;
/// Lanes of a conv tile: fixed at 32 whatever the warp width (the CPU backend's one-lane
/// "warp" loops over them), so that tiles and partials are the same on both backends.
pub const CONV_LANES: u32 = 32;
/// Output pixels (of one image plane) per conv tile.
pub const CONV_TILE_PX: u32 = CONV_PX * CONV_LANES;

/// Shape of a convolution + batch-norm problem, NCHW, fp32.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ConvGeom {
    pub n: u32,
    pub c_in: u32,
    pub c_out: u32,
    pub h: u32,
    pub w: u32,
}

impl ConvGeom {
    /// The shape, if every size is nonzero, `c_out` is a multiple of [`CONV_COB`], the
    /// sides fit 16 bits (they travel packed in task arguments) and every buffer length
    /// fits a `u32`.
    pub const fn checked(n: u32, c_in: u32, c_out: u32, h: u32, w: u32) -> Option<Self> {
        let g = Self { n, c_in, c_out, h, w };
        if n == 0 || c_in == 0 || c_out == 0 || h == 0 || w == 0 {
            return None;
        }
        if !c_out.is_multiple_of(CONV_COB) || c_in > 0xffff || c_out > 0xffff || h > 0xffff || w > 0xffff {
            return None;
        }
        let hw = h as u64 * w as u64;
        let biggest = [
            n as u64 * c_in as u64 * hw,
            n as u64 * c_out as u64 * hw,
            c_out as u64 * c_in as u64 * 9,
            c_out as u64 * n as u64 * hw.div_ceil(CONV_TILE_PX as u64) * 2,
        ];
        let mut i = 0;
        while i < biggest.len() {
            if biggest[i] > u32::MAX as u64 {
                return None;
            }
            i += 1;
        }
        Some(g)
    }

    pub const fn hw(&self) -> u32 {
        self.h * self.w
    }
    /// Conv tiles per (image, output channel group).
    pub const fn tiles_per_plane(&self) -> u32 {
        self.hw().div_ceil(CONV_TILE_PX)
    }
    pub const fn co_groups(&self) -> u32 {
        self.c_out / CONV_COB
    }
    /// Conv tiles of the whole problem.
    pub const fn tiles(&self) -> u32 {
        self.n * self.co_groups() * self.tiles_per_plane()
    }
    /// `(image, channel group, tile in plane)` of conv tile `t`; tiles of one image and
    /// channel group are consecutive.
    pub const fn tile(&self, t: u32) -> (u32, u32, u32) {
        let tpp = self.tiles_per_plane();
        let p = t % tpp;
        let rest = t / tpp;
        (rest / self.co_groups(), rest % self.co_groups(), p)
    }
    /// Output pixels in tile `p` of a plane (the last one may be short).
    pub const fn tile_pixels(&self, p: u32) -> u32 {
        let left = self.hw() - p * CONV_TILE_PX;
        if left < CONV_TILE_PX { left } else { CONV_TILE_PX }
    }
    pub const fn x_len(&self) -> u32 {
        self.n * self.c_in * self.hw()
    }
    pub const fn y_len(&self) -> u32 {
        self.n * self.c_out * self.hw()
    }
    /// Packed weights: `[c_out / 8][c_in][3][3][8]` (see `resident::nn::conv_bn::pack_weights`).
    pub const fn w_len(&self) -> u32 {
        self.c_out * self.c_in * CONV_K * CONV_K
    }
    /// Partial statistics: `(mean, m2)` per output channel and conv tile of that channel,
    /// `[c_out][n * tiles_per_plane][2]`.
    pub const fn partials_len(&self) -> u32 {
        self.c_out * self.n * self.tiles_per_plane() * 2
    }
    /// Index (in floats) of the `(mean, m2)` pair of channel `c`, image `n`, tile `p`.
    pub const fn partial_at(&self, c: u32, n: u32, p: u32) -> u32 {
        ((c * self.n + n) * self.tiles_per_plane() + p) * 2
    }
    /// Batch-norm parameters and results: `gamma[c_out]`, `beta[c_out]`, then the batch
    /// `mean[c_out]` and biased `var[c_out]` that the normalize tasks write.
    pub const fn affine_len(&self) -> u32 {
        4 * self.c_out
    }
}

/// The slice a task's handle names: elements `0 .. len` of a buffer of `T`.
pub const fn whole<T>(handle: BufferHandle, len: u32) -> resident_device::Slice<T> {
    resident_device::Slice::whole(handle, len)
}

/// Stage counters of the record pipeline, indices into its `u32` counts buffer.
pub mod record_counts {
    pub const PARSE_TASKS: usize = 0;
    pub const PARSED: usize = 1;
    pub const REJECTED: usize = 2;
    pub const TRANSFORM_TASKS: usize = 3;
    pub const KEPT: usize = 4;
    pub const DROPPED: usize = 5;
    pub const REDUCE_TASKS: usize = 6;
    pub const REDUCED: usize = 7;
    /// Length of the counts buffer.
    pub const LEN: usize = 8;
}

/// `u32` words per raw record: 32 ASCII bytes, `"<key>,<value>\n"` then zero bytes.
pub const RECORD_WORDS: u32 = 8;
/// Most records one pipeline task handles.
pub const MAX_RECORDS_PER_TASK: u32 = 1 << 16;
/// Key of a record that was rejected or dropped (in the parsed buffer).
pub const NO_KEY: u32 = u32::MAX;

/// The shape of a conv + BN problem as it travels in task arguments (sides packed in
/// 16 bits each).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct PackedGeom {
    pub n: u32,
    /// `c_in | c_out << 16`.
    pub channels: u32,
    /// `h | w << 16`.
    pub sides: u32,
}

impl PackedGeom {
    pub const fn of(g: &ConvGeom) -> Self {
        Self { n: g.n, channels: g.c_in | g.c_out << 16, sides: g.h | g.w << 16 }
    }
    /// The shape, if valid ([`ConvGeom::checked`]).
    pub const fn unpack(&self) -> Option<ConvGeom> {
        ConvGeom::checked(self.n, self.channels & 0xffff, self.channels >> 16, self.sides & 0xffff, self.sides >> 16)
    }
}

/// Conv tile `tile` of the shape (see [`ConvGeom::tile`]): `y` = 3×3 conv of `x` with
/// the packed weights `w`, and this tile's `(mean, m2)` per output channel into
/// `partials`. Buffers (each used from element 0 with the length its shape implies): `x`
/// f32 `[n][c_in][h][w]`, `w` f32 packed, `y` f32 `[n][c_out][h][w]`, `partials` f32
/// ([`ConvGeom::partials_len`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct ConvTile {
    pub x: BufferHandle,
    pub w: BufferHandle,
    pub y: BufferHandle,
    pub partials: BufferHandle,
    pub geom: PackedGeom,
    pub tile: u32,
}

/// Batch norm of channel `c` over images `n0 .. n0 + count`: merges every conv tile's
/// partials of the channel into the batch mean and variance, then
/// `out = max(0, (y - mean) / sqrt(var + eps) * gamma + beta)`. The task with `n0 == 0`
/// also stores the channel's mean and variance into `affine`. Run it after every conv
/// tile (`Task::after` on the counter the tiles signal).
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct BnNormalize {
    pub y: BufferHandle,
    pub out: BufferHandle,
    pub partials: BufferHandle,
    pub affine: BufferHandle,
    pub geom: PackedGeom,
    pub c: u32,
    pub n0: u32,
    pub count: u32,
    pub eps: f32,
}

/// The records of one pipeline task: records `first .. first + count` of `raw` (u32,
/// [`RECORD_WORDS`] per record), their parsed form in `parsed` (u32, two words per
/// record: key or [`NO_KEY`], value), the stage counts, and the per-key table (u32,
/// `[keys][2]`: count, wrapping sum).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Records {
    pub raw: BufferHandle,
    pub parsed: BufferHandle,
    pub counts: BufferHandle,
    pub table: BufferHandle,
    pub first: u32,
    pub count: u32,
    pub keys: u32,
}

/// Stage 1 of the record pipeline: parses the records, then pushes [`RecordTransform`]
/// for the same records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(transparent)]
pub struct RecordParse(pub Records);

/// Stage 2: filters and transforms, then pushes [`RecordReduce`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(transparent)]
pub struct RecordTransform(pub Records);

/// Stage 3: adds into the per-key table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(transparent)]
pub struct RecordReduce(pub Records);

/// Ids of the example tasks.
pub mod ids {
    use resident_device::TaskId;
    pub const CONV_TILE: TaskId = TaskId(0x100);
    pub const BN_NORMALIZE: TaskId = TaskId(0x101);
    pub const RECORD_PARSE: TaskId = TaskId(0x102);
    pub const RECORD_TRANSFORM: TaskId = TaskId(0x103);
    pub const RECORD_REDUCE: TaskId = TaskId(0x104);
}
