//! Packet capture of the router (`savanna-router run --capture FILE`): one fixed 32-byte
//! record per packet event (read from a host, dropped on a link, written to a host) with
//! the router's ideal time and the TCP header fields, sequence and acknowledgement numbers
//! relative to each direction's ISN. Off by default; a buffered writer, nothing allocated
//! per packet. `savanna.emulate(capture=True)` turns the file into `packets.parquet`.

use std::fs::File;
use std::io::{BufWriter, Write};

pub const EV_IN: u8 = 0;
pub const EV_DROP: u8 = 1;
pub const EV_OUT: u8 = 2;
pub const RECORD: usize = 32;

/// One event. `seq` and `ack` are byte offsets from the sending and the receiving side's
/// ISN + 1 (so the first data byte is 0); `reason` is the drop reason's index (0 otherwise).
#[derive(Clone, Copy, Default)]
pub struct Rec {
    pub t_ns: u64,
    pub conn: u32,
    pub seq: u32,
    pub ack: u32,
    pub len: u16,
    pub win: u16,
    pub ev: u8,
    pub kind: u8,
    pub to_side: u8,
    pub reason: u8,
    pub link: u16,
    pub flags: u8,
}

impl Rec {
    /// Little-endian layout: t_ns u64, conn u32, seq u32, ack u32, len u16, win u16, ev u8,
    /// kind u8, to_side u8, reason u8, link u16, flags u8, one pad byte.
    pub fn bytes(&self) -> [u8; RECORD] {
        let mut b = [0u8; RECORD];
        b[0..8].copy_from_slice(&self.t_ns.to_le_bytes());
        b[8..12].copy_from_slice(&self.conn.to_le_bytes());
        b[12..16].copy_from_slice(&self.seq.to_le_bytes());
        b[16..20].copy_from_slice(&self.ack.to_le_bytes());
        b[20..22].copy_from_slice(&self.len.to_le_bytes());
        b[22..24].copy_from_slice(&self.win.to_le_bytes());
        b[24] = self.ev;
        b[25] = self.kind;
        b[26] = self.to_side;
        b[27] = self.reason;
        b[28..30].copy_from_slice(&self.link.to_le_bytes());
        b[30] = self.flags;
        b
    }
}

pub struct Capture {
    out: BufWriter<File>,
    pub failed: bool,
}

impl Capture {
    pub fn create(path: &str) -> std::io::Result<Capture> {
        Ok(Capture { out: BufWriter::with_capacity(1 << 20, File::create(path)?), failed: false })
    }

    #[inline]
    pub fn write(&mut self, r: &Rec) {
        if !self.failed && self.out.write_all(&r.bytes()).is_err() {
            self.failed = true;
        }
    }

    pub fn finish(&mut self) -> bool {
        !self.failed && self.out.flush().is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_layout_is_the_documented_one() {
        let r = Rec {
            t_ns: 0x0102030405060708,
            conn: 7,
            seq: 1460,
            ack: 2920,
            len: 1460,
            win: 512,
            ev: EV_DROP,
            kind: 3,
            to_side: 1,
            reason: 2,
            link: 5,
            flags: 0x18,
        };
        let b = r.bytes();
        assert_eq!(u64::from_le_bytes(b[0..8].try_into().unwrap()), 0x0102030405060708);
        assert_eq!(u32::from_le_bytes(b[8..12].try_into().unwrap()), 7);
        assert_eq!(u32::from_le_bytes(b[12..16].try_into().unwrap()), 1460);
        assert_eq!(u32::from_le_bytes(b[16..20].try_into().unwrap()), 2920);
        assert_eq!(u16::from_le_bytes(b[20..22].try_into().unwrap()), 1460);
        assert_eq!(u16::from_le_bytes(b[22..24].try_into().unwrap()), 512);
        assert_eq!((b[24], b[25], b[26], b[27]), (EV_DROP, 3, 1, 2));
        assert_eq!(u16::from_le_bytes(b[28..30].try_into().unwrap()), 5);
        assert_eq!(b[30], 0x18);
    }
}
