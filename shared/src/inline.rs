//! A task's inline result as any small `Pod`: its `run` returns a `u64`, which a ticket
//! submitted with results keeps (`Batch::results`, `Ticket::results`). A value of up to
//! 8 bytes (an `f32`, a pair of `u16`, an `f64`, ...) goes in its low bytes and comes out
//! as the same type (`Ticket::results_as` on the host).

use bytemuck::Pod;

/// `v` as an inline result: its bytes in the low bytes of the `u64` (little-endian, as
/// every target of this crate), the rest zero. `T` at most 8 bytes (checked when
/// compiled).
#[inline(always)]
pub fn inline_result<T: Pod>(v: T) -> u64 {
    const { assert!(size_of::<T>() <= 8, "an inline result holds at most 8 bytes") };
    let mut bytes = [0u8; 8];
    bytes[..size_of::<T>()].copy_from_slice(bytemuck::bytes_of(&v));
    u64::from_le_bytes(bytes)
}

/// The value [`inline_result`] made of a `T`, read back.
#[inline(always)]
pub fn from_inline_result<T: Pod>(r: u64) -> T {
    const { assert!(size_of::<T>() <= 8, "an inline result holds at most 8 bytes") };
    bytemuck::pod_read_unaligned(&r.to_le_bytes()[..size_of::<T>()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        assert_eq!(from_inline_result::<f32>(inline_result(1.5f32)), 1.5);
        assert_eq!(from_inline_result::<f64>(inline_result(-2.25f64)), -2.25);
        assert_eq!(from_inline_result::<[u16; 3]>(inline_result([1u16, 2, 3])), [1, 2, 3]);
        assert_eq!(inline_result(7u32), 7);
        assert_eq!(inline_result(1.0f32), 1.0f32.to_bits() as u64);
    }
}
