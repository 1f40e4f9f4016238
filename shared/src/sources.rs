//! A fingerprint of this crate's sources, which both halves of a build compile in: the
//! host runtime (through its own compilation of this crate) and every kernel image (the
//! device's compilation, exported as the `RESIDENT_SHARED_SOURCES` global). The host
//! refuses an image whose fingerprint is not its own: the two halves were built from
//! different layouts, and a host that writes a `SegmentCount` of 32 bytes where the
//! device reads 16 corrupts the queue quietly.
//!
//! How that happens without anyone editing anything: Cargo names the artifacts of a
//! path dependency by its path relative to the workspace, so two checkouts that share
//! one target directory (`CARGO_TARGET_DIR`) overwrite each other's `resident-shared`,
//! and a file's modification time older than the artifact reads as fresh. The kernel
//! image is built by its own compiler run and may come from either checkout.
//!
//! Every file, comments included: a stricter check than the layouts themselves, which
//! never refuses a consistent build (both halves always compile the same files).

/// The crate's source files, in a fixed order (the test below checks that it names
/// every file of `src/`).
const FILES: &[(&str, &[u8])] = &[
    ("buffer.rs", include_bytes!("buffer.rs")),
    ("builtin.rs", include_bytes!("builtin.rs")),
    ("completion.rs", include_bytes!("completion.rs")),
    ("counter.rs", include_bytes!("counter.rs")),
    ("declare.rs", include_bytes!("declare.rs")),
    ("inline.rs", include_bytes!("inline.rs")),
    ("lib.rs", include_bytes!("lib.rs")),
    ("link.rs", include_bytes!("link.rs")),
    ("lists.rs", include_bytes!("lists.rs")),
    ("params.rs", include_bytes!("params.rs")),
    ("queue.rs", include_bytes!("queue.rs")),
    ("relay.rs", include_bytes!("relay.rs")),
    ("segment.rs", include_bytes!("segment.rs")),
    ("sources.rs", include_bytes!("sources.rs")),
    ("spawn.rs", include_bytes!("spawn.rs")),
    ("status.rs", include_bytes!("status.rs")),
    ("steps.rs", include_bytes!("steps.rs")),
    ("task.rs", include_bytes!("task.rs")),
];

/// FNV-1a (64 bits) of every file's name and bytes, in [`FILES`]' order.
pub const SOURCES: u64 = {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let mut f = 0;
    while f < FILES.len() {
        let (name, bytes) = FILES[f];
        h = fnv(h, name.as_bytes());
        h = fnv(h, bytes);
        f += 1;
    }
    h
};

const fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    let mut i = 0;
    while i < bytes.len() {
        h ^= bytes[i] as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
        i += 1;
    }
    h
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::string::String;
    use std::vec::Vec;

    #[test]
    fn names_every_file() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut found: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).filter(|n| n.ends_with(".rs")).collect();
        found.sort();
        let listed: Vec<String> = super::FILES.iter().map(|(n, _)| String::from(*n)).collect();
        assert_eq!(found, listed, "sources.rs: FILES must name every file of shared/src, sorted");
    }

    #[test]
    fn differs_by_one_byte() {
        assert_ne!(super::fnv(1, b"a"), super::fnv(1, b"b"));
        assert_ne!(super::SOURCES, 0);
    }
}
