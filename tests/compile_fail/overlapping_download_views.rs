// Two downloads into the same pinned range at once: views are exclusive, like &mut.
use resident::stream::Device;

fn main() -> resident::Result<()> {
    let gpu = Device::first()?;
    let mut dst = gpu.pinned::<f32>(1024)?;
    let dev = gpu.alloc_zeroed::<f32>(1024)?;
    gpu.scope(|s| {
        let (a, b) = (s.stream()?, s.stream()?);
        a.copy_d2h(&dev, &mut dst)?;
        b.copy_d2h(&dev, &mut dst)?;
        Ok(())
    })
}
