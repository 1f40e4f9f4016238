//! The conv tile and batch-norm normalize as task types: their declarations (every
//! buffer used from element 0 with the length the shape implies) and their runs (the
//! same checks again on the device, then [`crate::conv`] and [`crate::bn`]).

use resident_device::{ArgError, Declare, DeviceTask, Status, TaskCx, TaskId};

use crate::layout::{self, BnNormalize, ConvTile, whole};
use crate::{bn, conv};

const BAD_SHAPE: ArgError =
    ArgError::Bad("conv shape: sizes nonzero, c_out a multiple of 8, sides below 2^16, buffers below 2^32 elements");

impl DeviceTask for ConvTile {
    const ID: TaskId = layout::ids::CONV_TILE;
    fn declare(&self, d: &mut Declare<'_>) -> Result<(), ArgError> {
        let g = self.geom.unpack().ok_or(BAD_SHAPE)?;
        if self.tile >= g.tiles() {
            return Err(ArgError::IndexOutOfRange { index: self.tile, len: g.tiles() });
        }
        d.read(whole::<f32>(self.x, g.x_len()));
        d.read(whole::<f32>(self.w, g.w_len()));
        d.write(whole::<f32>(self.y, g.y_len()));
        d.write(whole::<f32>(self.partials, g.partials_len()));
        Ok(())
    }
    /// Resolves and checks the buffers, then runs the tile.
    #[inline(always)]
    fn run(&self, cx: &TaskCx) -> Result<u64, Status> {
        let g = self.geom.unpack().ok_or(Status::BadArgs)?;
        let tile = self.tile;
        if tile >= g.tiles() {
            return Err(Status::BadArgs);
        }
        let [x, w, y, partials] = cx.views([
            whole::<f32>(self.x, g.x_len()),
            whole(self.w, g.w_len()),
            whole(self.y, g.y_len()),
            whole(self.partials, g.partials_len()),
        ])?;
        if !(w.as_ptr() as usize).is_multiple_of(16) {
            return Err(Status::BadArgs);
        }
        // SAFETY: every view holds the length the shape implies (checked above).
        unsafe { conv::conv_tile(&g, x.as_ptr(), w.as_ptr(), y.as_mut_ptr()?, partials.as_mut_ptr()?, tile) };
        Ok(tile as u64)
    }
}

impl DeviceTask for BnNormalize {
    const ID: TaskId = layout::ids::BN_NORMALIZE;
    fn declare(&self, d: &mut Declare<'_>) -> Result<(), ArgError> {
        let g = self.geom.unpack().ok_or(BAD_SHAPE)?;
        if self.c >= g.c_out || self.n0 as u64 + self.count as u64 > g.n as u64 || !(self.eps >= 0.0 && self.eps.is_finite()) {
            return Err(ArgError::Bad("normalize: channel below c_out, images within the batch, eps finite and >= 0"));
        }
        d.read(whole::<f32>(self.y, g.y_len()));
        d.write(whole::<f32>(self.out, g.y_len()));
        d.read(whole::<f32>(self.partials, g.partials_len()));
        d.write(whole::<f32>(self.affine, g.affine_len()));
        Ok(())
    }
    /// Resolves and checks the buffers, then normalizes.
    #[inline(never)]
    fn run(&self, cx: &TaskCx) -> Result<u64, Status> {
        let g = self.geom.unpack().ok_or(Status::BadArgs)?;
        let (c, n0, count, eps) = (self.c, self.n0, self.count, self.eps);
        if c >= g.c_out || n0 as u64 + count as u64 > g.n as u64 || eps.is_nan() || eps < 0.0 {
            return Err(Status::BadArgs);
        }
        let [y, out, partials, affine] = cx.views([
            whole::<f32>(self.y, g.y_len()),
            whole(self.out, g.y_len()),
            whole(self.partials, g.partials_len()),
            whole(self.affine, g.affine_len()),
        ])?;
        // SAFETY: as for the conv tile.
        unsafe { bn::normalize(&g, y.as_ptr(), out.as_mut_ptr()?, partials.as_ptr(), affine.as_mut_ptr()?, c, n0, count, eps) };
        Ok(count as u64)
    }
}
