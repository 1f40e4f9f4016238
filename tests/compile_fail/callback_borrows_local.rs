// A host callback runs on a driver thread at an unbounded later time: it cannot
// borrow the caller's locals.
use resident::stream::Device;

fn main() -> resident::Result<()> {
    let gpu = Device::first()?;
    let st = gpu.stream()?;
    let mut order = Vec::new();
    st.on_host(|| order.push(1))?;
    st.synchronize()?;
    Ok(())
}
