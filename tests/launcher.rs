//! What a job launcher tells a process (`resident::LaunchEnv`), and the rendezvous that
//! hands every rank rank 0's NCCL id: no GPU needed.

use resident::{Error, LaunchEnv, rendezvous};
use std::collections::HashMap;
use std::time::Duration;

fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let m: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    move |k| m.get(k).cloned()
}

#[test]
fn each_launcher() {
    let t = LaunchEnv::from_vars(env(&[
        ("RANK", "3"),
        ("WORLD_SIZE", "8"),
        ("LOCAL_RANK", "1"),
        ("MASTER_ADDR", "n0"),
        ("MASTER_PORT", "29500"),
    ]))
    .unwrap();
    assert_eq!((t.rank, t.size, t.local_rank, t.master.as_deref(), t.launcher), (3, 8, Some(1), Some("n0:29501"), "torchrun"));
    let m = LaunchEnv::from_vars(env(&[("OMPI_COMM_WORLD_RANK", "0"), ("OMPI_COMM_WORLD_SIZE", "2"), ("OMPI_COMM_WORLD_LOCAL_RANK", "0")]))
        .unwrap();
    assert_eq!((m.rank, m.size, m.master, m.launcher), (0, 2, None, "mpirun"));
    let p = LaunchEnv::from_vars(env(&[("PMI_RANK", "1"), ("PMI_SIZE", "4")])).unwrap();
    assert_eq!((p.rank, p.size, p.local_rank, p.launcher), (1, 4, None, "pmi"));
    let s = LaunchEnv::from_vars(env(&[("SLURM_PROCID", "5"), ("SLURM_NTASKS", "6"), ("SLURM_LOCALID", "1")])).unwrap();
    assert_eq!((s.rank, s.size, s.local_rank, s.launcher), (5, 6, Some(1), "srun"));
    let v6 = LaunchEnv::from_vars(env(&[("RANK", "0"), ("WORLD_SIZE", "2"), ("MASTER_ADDR", "::1"), ("MASTER_PORT", "29500")])).unwrap();
    assert_eq!(v6.master.as_deref(), Some("[::1]:29501"));
    // torchrun's variables win over Slurm's when both are set (torchrun under srun).
    let both = LaunchEnv::from_vars(env(&[("RANK", "1"), ("WORLD_SIZE", "2"), ("SLURM_PROCID", "0"), ("SLURM_NTASKS", "1")])).unwrap();
    assert_eq!(both.launcher, "torchrun");
}

#[test]
fn bad_environments_are_typed_errors() {
    for vars in [
        &[][..],
        &[("RANK", "2"), ("WORLD_SIZE", "2")][..],
        &[("RANK", "x"), ("WORLD_SIZE", "2")][..],
        &[("RANK", "0"), ("WORLD_SIZE", "0")][..],
        &[("RANK", "0"), ("WORLD_SIZE", "2"), ("MASTER_ADDR", "h"), ("MASTER_PORT", "65535")][..],
        // Numbers are decimal digits alone: no sign, no blanks inside, nothing past usize.
        &[("RANK", "+1"), ("WORLD_SIZE", "2")][..],
        &[("RANK", "0"), ("WORLD_SIZE", "+2")][..],
        &[("RANK", "-0"), ("WORLD_SIZE", "2")][..],
        &[("RANK", "0"), ("WORLD_SIZE", "2 0")][..],
        &[("RANK", "0"), ("WORLD_SIZE", "")][..],
        &[("RANK", "0"), ("WORLD_SIZE", "99999999999999999999999")][..],
        &[("RANK", "0"), ("WORLD_SIZE", "2"), ("MASTER_ADDR", "h"), ("MASTER_PORT", "+29500")][..],
        &[("RANK", "0"), ("WORLD_SIZE", "2"), ("MASTER_ADDR", "h"), ("RESIDENT_RDZV_PORT", "+1")][..],
        // A port near usize::MAX: refused, not wrapped (or a panic in a debug build).
        &[("RANK", "0"), ("WORLD_SIZE", "2"), ("MASTER_ADDR", "h"), ("MASTER_PORT", "18446744073709551615")][..],
        &[("RANK", "0"), ("WORLD_SIZE", "2"), ("MASTER_ADDR", "h"), ("MASTER_PORT", "18446744073709551614")][..],
    ] {
        assert!(matches!(LaunchEnv::from_vars(env(vars)), Err(Error::Config(_))), "{vars:?}");
    }
}

#[test]
fn nccl_ids_are_hex_digits_alone() {
    let good: String = (0..128).map(|i| format!("{:02x}", (i * 37 + 5) as u8)).collect();
    let id = resident::nccl::NcclId::from_hex(&good).unwrap();
    assert_eq!(id.to_hex(), good);
    // Signs, blanks and other non-digits in any pair, though u8::from_str_radix takes
    // a leading `+`.
    for bad in [
        "+1".repeat(128),
        format!("{} 1", &good[..254]),
        format!("g{}", &good[1..]),
        format!("{}+f", &good[..254]),
        good[..254].to_string(),
    ] {
        assert!(matches!(resident::nccl::NcclId::from_hex(&bad), Err(Error::Config(_))), "{bad:?}");
    }
}

#[test]
fn rendezvous_hands_every_rank_rank_zeros_id() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let addr = format!("127.0.0.1:{port}");
    let mut id = [0u8; 128];
    id.iter_mut().enumerate().for_each(|(i, b)| *b = (i * 7 + 3) as u8);
    let size = 5;
    let got: Vec<[u8; 128]> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..size)
            .map(|rank| {
                let addr = addr.clone();
                // The others may start first: they retry until rank 0 listens.
                s.spawn(move || rendezvous(&addr, rank, size, Duration::from_secs(20), || Ok(id)).unwrap())
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(got.iter().all(|g| *g == id));
    // A stray connection (it says no rank of the job) does not count: rank 0 still
    // waits for the real ranks, and the stray gets nothing.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let addr = format!("127.0.0.1:{port}");
    let got: Vec<[u8; 128]> = std::thread::scope(|s| {
        let root = {
            let addr = addr.clone();
            s.spawn(move || rendezvous(&addr, 0, 3, Duration::from_secs(20), || Ok(id)).unwrap())
        };
        loop {
            if let Ok(mut c) = std::net::TcpStream::connect(&addr) {
                use std::io::{Read, Write};
                c.write_all(&77u64.to_le_bytes()).unwrap();
                c.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
                let mut b = [0u8; 1];
                assert!(!matches!(c.read(&mut b), Ok(1)), "a stray connection got the id");
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let hs: Vec<_> = (1..3)
            .map(|rank| {
                let addr = addr.clone();
                s.spawn(move || rendezvous(&addr, rank, 3, Duration::from_secs(20), || Ok(id)).unwrap())
            })
            .collect();
        let mut v: Vec<_> = hs.into_iter().map(|h| h.join().unwrap()).collect();
        v.push(root.join().unwrap());
        v
    });
    assert!(got.iter().all(|g| *g == id));
    assert!(matches!(rendezvous(&addr, 0, 0, Duration::MAX, || Ok(id)), Err(Error::Config(_))));
    // Nobody comes: rank 0 gives up with a typed error.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let r = rendezvous(&format!("127.0.0.1:{port}"), 0, 3, Duration::from_millis(200), || Ok(id));
    assert!(matches!(r, Err(Error::Config(_))), "{r:?}");
}

#[test]
fn nccl_ids_round_trip_as_hex() {
    let mut raw = [0u8; 128];
    raw.iter_mut().enumerate().for_each(|(i, b)| *b = (255 - i) as u8);
    let id = resident::nccl::NcclId(raw);
    assert_eq!(resident::nccl::NcclId::from_hex(&id.to_hex()).unwrap(), id);
    assert!(resident::nccl::NcclId::from_hex("12").is_err());
    assert!(resident::nccl::NcclId::from_hex(&"zz".repeat(128)).is_err());
}
