// A scoped stream cannot leave its scope (it could then borrow past the final sync).
use resident::stream::Device;

fn main() -> resident::Result<()> {
    let gpu = Device::first()?;
    let st = gpu.scope(|s| s.stream())?;
    let src = gpu.pinned::<f32>(16)?;
    let dev = gpu.alloc_zeroed::<f32>(16)?;
    st.copy_h2d(&src, &dev)?;
    Ok(())
}
