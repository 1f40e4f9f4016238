// A host callback runs on a driver thread at an unbounded later time: it cannot
// borrow the caller's locals.
use resident::stream::Gpu;

fn main() -> resident::Result<()> {
    let gpu = Gpu::first()?;
    let st = gpu.stream()?;
    let mut order = Vec::new();
    st.on_host(|| order.push(1))?;
    st.synchronize()?;
    Ok(())
}
