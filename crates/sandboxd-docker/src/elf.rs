//! Whether the agent binary is a static ELF, so it runs in any image.

use std::path::Path;

/// Whether a path is a statically linked ELF (no program interpreter), so it runs in any image.
pub fn is_static_elf(path: &Path) -> std::io::Result<bool> {
    let bytes = std::fs::read(path)?;
    Ok(bytes.starts_with(b"\x7fELF") && !elf_has_interpreter(&bytes))
}

/// Reads the program headers of a 64-bit little-endian ELF and looks for PT_INTERP.
fn elf_has_interpreter(elf: &[u8]) -> bool {
    const PT_INTERP: u32 = 3;
    let read_u16 = |at: usize| {
        elf.get(at..at + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
    };
    let read_u32 = |at: usize| {
        elf.get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let read_u64 = |at: usize| {
        elf.get(at..at + 8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    };
    let (Some(phoff), Some(phentsize), Some(phnum)) =
        (read_u64(0x20), read_u16(0x36), read_u16(0x38))
    else {
        return true;
    };
    // Past what this host can address: no header can be there.
    let Ok(phoff) = usize::try_from(phoff) else {
        return false;
    };
    (0..usize::from(phnum)).any(|i| {
        let at = phoff.checked_add(i * usize::from(phentsize));
        at.and_then(read_u32) == Some(PT_INTERP)
    })
}
