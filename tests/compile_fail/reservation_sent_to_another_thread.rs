// A reservation stays on the thread that made it (its open mark is that thread's, and
// a batch reserved after it on that thread would wait for it): it is not `Send`.

fn main() -> resident::Result<()> {
    let rt = resident::Runtime::with_config(resident::RuntimeConfig::cpu())?;
    std::thread::scope(|s| {
        let r = rt.reserve(4).unwrap();
        s.spawn(move || drop(r));
    });
    Ok(())
}
