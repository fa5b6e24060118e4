//! Analytical models used to validate the simulator: Padhye et al. 1998 TCP throughput; more come with later work.

pub mod padhye;
