//! Analytical models, used to validate the simulator and to set parameters the papers
//! derive from analysis: Padhye et al. 1998 TCP throughput (`padhye`); Guo & Matta 2001's
//! latency of a d-packet transfer, eq. (1)-(2) (`guo_matta`); Tokuda, Hasegawa & Murata
//! 2002's throughput of an f-packet transfer with a higher loss rate after the K-th packet
//! and their F(K) criterion for K (`tokuda`), on document sizes counted in packets
//! (`sizes`); Matta & Guo 2000's aggregate and individual control models (`control`).

pub mod control;
pub mod guo_matta;
pub mod padhye;
pub mod sizes;
pub mod tokuda;
