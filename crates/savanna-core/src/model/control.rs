//! The discrete-time control models of Matta & Guo 2000 ("Differentiated Predictive Fair
//! Service for TCP Flows", BU-CS-2000-012, section II and Appendix I): N flows adapt the
//! number of new packets they send per step with a PID-style law, either from the
//! *aggregate* state of a shared buffer (eq. (1)) or each from its *individual* state
//! (eq. (5)), with a constant service (acknowledgement) rate.
//!
//! Aggregate (sharing), eq. (1):
//!   q^k   = q^{k-1} + sum_i w_i^{k-1} - C
//!   w_i^k = w_i^{k-1} + alpha_i (B - q^k) + beta_i [(B - q^k) - (B - q^{k-1})]
//! Individual (isolation), eq. (5): the same per flow with its own q_i, B_i and C_i.
//!
//! The paper's result: with identical flows the aggregate model's characteristic
//! polynomial is z^2 + [N(alpha + beta) - 2] z + (1 - beta N) (eq. (12)) and the model is
//! stable iff alpha + 2 beta < 4/N (eq. (2)); isolation needs only alpha_i + 2 beta_i < 4
//! (eq. (6)). At equilibrium q = B and sum w = C; with identical gains every w_i moves by
//! the same amount, so w_i -> w_i^0 + (C - sum_j w_j^0)/N (eq. (4)): unfair unless the
//! flows start equal. Isolation converges to q_i = B_i, w_i = C_i (eq. (7)).
//!
//! Two independent numerical verdicts on stability:
//! - [`stable_by_iteration`] runs eq. (1) literally (every flow, absolute values) from a
//!   perturbed start and measures whether the aggregate error |B - q| + |sum w - C| dies
//!   out (the spread between flows is neutral: eq. (4) keeps it);
//! - [`poles`] solves eq. (12) (for unequal gains, with N alpha and N beta replaced by
//!   their sums, which is what eq. (1) sums to) and compares the spectral radius with 1.
//!
//! Readings: the time indices are the paper's (q^k uses the windows of step k-1; w^k uses
//! q^k and q^{k-1}); "stable" means asymptotically stable: a pole on the unit circle (for
//! example beta = 0, where the error oscillates forever) is not stable, which matches the
//! strict inequality of eq. (2); the paper's condition assumes alpha, beta > 0 (the other
//! Jury conditions, alpha > 0 and beta N < 2, then follow from it).

/// A run of a control model: q (per flow for the individual model) and w per step,
/// steps 0..=n.
#[derive(Clone, Debug, Default)]
pub struct Trajectory {
    /// q^k (aggregate: one column; individual: one per flow).
    pub q: Vec<Vec<f64>>,
    /// w_i^k.
    pub w: Vec<Vec<f64>>,
}

/// Gains, initial state and targets of a model run.
#[derive(Clone, Debug)]
pub struct Setup {
    pub alpha: Vec<f64>,
    pub beta: Vec<f64>,
    pub w0: Vec<f64>,
    /// q^0: one value (aggregate) or one per flow (individual).
    pub q0: Vec<f64>,
    /// B: one value (aggregate) or B_i per flow (individual).
    pub target: Vec<f64>,
    /// C: one value (aggregate) or C_i per flow (individual).
    pub service: Vec<f64>,
}

impl Setup {
    /// Check lengths and values; the message names the argument.
    pub fn check(&self, individual: bool) -> Result<(), String> {
        let n = self.alpha.len();
        if n == 0 {
            return Err("alpha: give at least one flow".into());
        }
        let per = if individual { n } else { 1 };
        for (name, v, want) in [
            ("beta", &self.beta, n),
            ("w0", &self.w0, n),
            ("q0", &self.q0, per),
            ("target", &self.target, per),
            ("service", &self.service, per),
        ] {
            if v.len() != want {
                return Err(format!(
                    "{name}: needs {want} value(s) ({}), got {}",
                    if want == n && n > 1 { "one per flow" } else { "one" },
                    v.len()
                ));
            }
        }
        for (name, v) in [
            ("alpha", &self.alpha),
            ("beta", &self.beta),
            ("w0", &self.w0),
            ("q0", &self.q0),
            ("target", &self.target),
            ("service", &self.service),
        ] {
            if let Some(x) = v.iter().find(|x| !x.is_finite()) {
                return Err(format!("{name}: must be finite numbers, got {x}"));
            }
        }
        Ok(())
    }
}

/// Eq. (1), `steps` steps from w^0 and q^0.
pub fn simulate_aggregate(s: &Setup, steps: usize) -> Trajectory {
    let (b, c) = (s.target[0], s.service[0]);
    let mut w = s.w0.clone();
    let mut q = s.q0[0];
    let mut out = Trajectory { q: vec![vec![q]], w: vec![w.clone()] };
    for _ in 0..steps {
        let q_new = q + w.iter().sum::<f64>() - c;
        for (i, wi) in w.iter_mut().enumerate() {
            *wi += s.alpha[i] * (b - q_new) + s.beta[i] * ((b - q_new) - (b - q));
        }
        q = q_new;
        out.q.push(vec![q]);
        out.w.push(w.clone());
    }
    out
}

/// Eq. (5), `steps` steps: each flow against its own q_i, B_i, C_i.
pub fn simulate_individual(s: &Setup, steps: usize) -> Trajectory {
    let mut w = s.w0.clone();
    let mut q = s.q0.clone();
    let mut out = Trajectory { q: vec![q.clone()], w: vec![w.clone()] };
    for _ in 0..steps {
        for i in 0..w.len() {
            let q_new = q[i] + w[i] - s.service[i];
            let e = s.target[i] - q_new;
            w[i] += s.alpha[i] * e + s.beta[i] * (e - (s.target[i] - q[i]));
            q[i] = q_new;
        }
        out.q.push(q.clone());
        out.w.push(w.clone());
    }
    out
}

/// The two roots (re, im) of eq. (12), z^2 + [A + Bs - 2] z + (1 - Bs), with A = sum of the
/// alphas and Bs = sum of the betas (N alpha and N beta for identical flows).
pub fn poles(alpha_sum: f64, beta_sum: f64) -> [(f64, f64); 2] {
    let a1 = alpha_sum + beta_sum - 2.0;
    let a0 = 1.0 - beta_sum;
    let disc = a1 * a1 - 4.0 * a0;
    if disc >= 0.0 {
        let r = disc.sqrt();
        [((-a1 + r) / 2.0, 0.0), ((-a1 - r) / 2.0, 0.0)]
    } else {
        let im = (-disc).sqrt() / 2.0;
        [(-a1 / 2.0, im), (-a1 / 2.0, -im)]
    }
}

/// Largest pole modulus of eq. (12) for N identical flows.
pub fn spectral_radius(alpha: f64, beta: f64, n: u32) -> f64 {
    let nf = n as f64;
    poles(nf * alpha, nf * beta).iter().map(|(re, im)| re.hypot(*im)).fold(0.0, f64::max)
}

/// The paper's condition, eq. (2): alpha + 2 beta < 4/N.
pub fn paper_condition(alpha: f64, beta: f64, n: u32) -> bool {
    alpha + 2.0 * beta < 4.0 / n as f64
}

/// What [`stable_by_iteration`] found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Verdict {
    pub stable: bool,
    /// Estimated per-step contraction of the aggregate error (< 1: it dies out).
    pub rate: f64,
    /// Steps run.
    pub steps: usize,
}

/// Run eq. (1) for N flows with gains `alpha`, `beta` (one per flow) from a perturbed
/// equilibrium (B = 100 packets, C = 10 per step, unequal starting windows, q^0 = B + 5)
/// and decide whether the aggregate error e_k = |B - q^k| + |sum w^k - C| dies out. The run
/// stops once the error has shrunk (stable) or grown (unstable) by 10^12, or after
/// `max_steps`; the contraction rate is the ratio of the error's envelope (its largest
/// value) over the fourth and the second quarter of the run, per step. Deterministic.
pub fn stable_by_iteration(alpha: &[f64], beta: &[f64], max_steps: usize) -> Verdict {
    let n = alpha.len();
    let (b, c) = (100.0, 10.0);
    let mut w: Vec<f64> = (0..n).map(|i| c / n as f64 * (1.0 + 0.1 * ((i % 7) as f64 - 3.0) / 3.0)).collect();
    let mut q = b + 5.0;
    let err = |q: f64, w: &[f64]| (b - q).abs() + (w.iter().sum::<f64>() - c).abs();
    let e0 = err(q, &w);
    let mut hist = vec![e0];
    let mut verdict = None;
    for k in 1..=max_steps.max(16) {
        let q_new = q + w.iter().sum::<f64>() - c;
        for (i, wi) in w.iter_mut().enumerate() {
            *wi += alpha[i] * (b - q_new) + beta[i] * ((b - q_new) - (b - q));
        }
        q = q_new;
        let e = err(q, &w);
        if !e.is_finite() {
            return Verdict { stable: false, rate: f64::INFINITY, steps: k };
        }
        hist.push(e);
        if k >= 16 && e > 1e12 * e0 {
            verdict = Some(false);
            break;
        }
        if k >= 16 && e < 1e-12 * e0 {
            verdict = Some(true);
            break;
        }
    }
    let k = hist.len() - 1;
    let quarter = k / 4;
    let env = |from: usize, to: usize| hist[from..to].iter().fold(0.0f64, |m, &x| m.max(x));
    let rate = (env(3 * quarter, k + 1) / env(quarter, 2 * quarter)).powf(1.0 / (2 * quarter) as f64);
    Verdict { stable: verdict.unwrap_or(rate < 1.0 - 1e-9), rate, steps: k }
}

/// Stability of the aggregate model for N identical flows: by iteration (default) or by
/// the poles of eq. (12).
pub fn stable(alpha: f64, beta: f64, n: u32, by_poles: bool) -> bool {
    if by_poles {
        spectral_radius(alpha, beta, n) < 1.0
    } else {
        let n = n as usize;
        stable_by_iteration(&vec![alpha; n], &vec![beta; n], 200_000).stable
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The numerical boundary of eq. (1) agrees with eq. (2) across a grid of gains and
    /// flow counts, by both methods; points within 2% of the boundary line are left out
    /// (the contraction there is within 1% of 1, which a finite run measures but the
    /// grid's claim does not need).
    #[test]
    fn boundary_matches_alpha_plus_two_beta_below_four_over_n() {
        let mut checked = 0;
        let mut unstable = 0;
        for n in [1u32, 2, 5, 10, 40] {
            let scale = 4.0 / n as f64;
            for i in 1..=24 {
                for j in 1..=24 {
                    let alpha = scale * i as f64 / 16.0;
                    let beta = scale * j as f64 / 32.0;
                    let lhs = (alpha + 2.0 * beta) / scale;
                    if (lhs - 1.0).abs() < 0.02 {
                        continue;
                    }
                    let want = paper_condition(alpha, beta, n);
                    assert_eq!(stable(alpha, beta, n, false), want, "iteration: N={n} alpha={alpha} beta={beta}");
                    assert_eq!(stable(alpha, beta, n, true), want, "poles: N={n} alpha={alpha} beta={beta}");
                    checked += 1;
                    unstable += !want as u32;
                }
            }
        }
        assert!(checked > 2000 && unstable > 500 && checked - unstable > 500, "{checked} {unstable}");
    }

    #[test]
    fn iteration_rate_matches_the_poles() {
        for &(alpha, beta, n) in &[(0.02, 0.01, 10u32), (0.3, 0.1, 4), (0.05, 0.3, 5), (0.1, 0.02, 30)] {
            let v = stable_by_iteration(&vec![alpha; n as usize], &vec![beta; n as usize], 200_000);
            let r = spectral_radius(alpha, beta, n);
            assert!((v.rate - r).abs() < 0.03 * r, "{alpha} {beta} {n}: {v:?} vs {r}");
        }
    }

    #[test]
    fn marginal_gains_are_not_stable() {
        // beta = 0: poles on the unit circle, the error oscillates for ever.
        assert!(!stable(0.1, 0.0, 4, false));
        assert!(!stable(0.1, 0.0, 4, true));
    }

    /// Unequal gains: eq. (1) sums to eq. (12) with the sums of the gains, so the exact
    /// condition is sum(alpha) + 2 sum(beta) < 4; the paper's condition with the largest
    /// alpha and beta (eq. (2)) is sufficient, not necessary.
    #[test]
    fn unequal_gains() {
        let radius = |a: &[f64], b: &[f64]| {
            poles(a.iter().sum(), b.iter().sum()).iter().map(|(x, y)| x.hypot(*y)).fold(0.0, f64::max)
        };
        // Eq. (2) with the maxima holds (0.2 + 2 * 0.3 < 4/4): stable.
        let (alpha, beta) = ([0.01, 0.05, 0.2, 0.02], [0.01, 0.02, 0.3, 0.01]);
        assert!(paper_condition(0.2, 0.3, 4));
        assert!(stable_by_iteration(&alpha, &beta, 100_000).stable);
        // Eq. (2) with the maxima fails (1.2 + 0.02 > 1) but the sums pass: still stable.
        let (alpha, beta) = ([0.01, 0.01, 0.01, 1.2], [0.01; 4]);
        assert!(!paper_condition(1.2, 0.01, 4));
        assert!(stable_by_iteration(&alpha, &beta, 100_000).stable);
        assert!(radius(&alpha, &beta) < 1.0);
        // Sums above the limit: unstable although most flows are gentle.
        let (alpha, beta) = ([0.01, 0.01, 3.0], [0.01, 0.01, 0.6]);
        assert!(!stable_by_iteration(&alpha, &beta, 100_000).stable);
        assert!(radius(&alpha, &beta) > 1.0);
    }

    /// Eq. (3)-(4): at equilibrium q = B and sum w = C; identical gains keep the flows'
    /// initial differences, w_i -> w_i^0 + (C - sum w^0)/N.
    #[test]
    fn aggregate_equilibrium_is_unfair() {
        let n = 5;
        let s = Setup {
            alpha: vec![0.05; n],
            beta: vec![0.02; n],
            w0: vec![1.0, 2.0, 3.0, 0.5, 6.0],
            q0: vec![40.0],
            target: vec![100.0],
            service: vec![10.0],
        };
        assert!(paper_condition(0.05, 0.02, n as u32));
        let t = simulate_aggregate(&s, 5000);
        let last = t.w.last().unwrap();
        assert!((t.q.last().unwrap()[0] - 100.0).abs() < 1e-6);
        assert!((last.iter().sum::<f64>() - 10.0).abs() < 1e-6);
        let shift = (10.0 - s.w0.iter().sum::<f64>()) / n as f64;
        for (i, (w, w0)) in last.iter().zip(&s.w0).enumerate() {
            assert!((w - (w0 + shift)).abs() < 1e-6, "flow {i}: {w} vs {}", w0 + shift);
        }
    }

    /// Eq. (6)-(7): isolation converges to q_i = B_i, w_i = C_i whatever the start, and a
    /// flow with aggressive gains cannot upset the others.
    #[test]
    fn individual_control_isolates() {
        let s = Setup {
            alpha: vec![0.05, 0.3, 3.5],
            beta: vec![0.02, 0.1, 0.5],
            w0: vec![7.0, 0.0, 1.0],
            q0: vec![0.0, 90.0, 10.0],
            target: vec![50.0, 30.0, 20.0],
            service: vec![5.0, 3.0, 2.0],
        };
        // Flows 0 and 1 satisfy alpha + 2 beta < 4; flow 2 does not (3.5 + 1 = 4.5).
        let t = simulate_individual(&s, 3000);
        let (q, w) = (t.q.last().unwrap(), t.w.last().unwrap());
        for i in 0..2 {
            assert!(
                (q[i] - s.target[i]).abs() < 1e-6 && (w[i] - s.service[i]).abs() < 1e-6,
                "flow {i}: q {} w {}",
                q[i],
                w[i]
            );
        }
        let off = (q[2] - s.target[2]).abs();
        assert!(off.is_nan() || off > 1.0, "flow 2 diverges (to infinity or NaN): {}", q[2]);
        // Each class alone is the aggregate model with N = 1.
        for i in 0..3 {
            assert_eq!(spectral_radius(s.alpha[i], s.beta[i], 1) < 1.0, s.alpha[i] + 2.0 * s.beta[i] < 4.0);
        }
        // The same three flows sharing one buffer: the aggressive one destabilises all.
        assert!(!stable_by_iteration(&s.alpha, &s.beta, 100_000).stable);
    }

    #[test]
    fn setup_checks_name_the_argument() {
        let ok = Setup {
            alpha: vec![0.1; 2],
            beta: vec![0.1; 2],
            w0: vec![1.0; 2],
            q0: vec![0.0],
            target: vec![10.0],
            service: vec![2.0],
        };
        assert!(ok.check(false).is_ok());
        assert!(ok.check(true).unwrap_err().starts_with("q0:"));
        let bad = Setup { beta: vec![0.1], ..ok.clone() };
        assert!(bad.check(false).unwrap_err().starts_with("beta:"));
        let bad = Setup { alpha: vec![], ..ok.clone() };
        assert!(bad.check(false).unwrap_err().starts_with("alpha:"));
        let bad = Setup { w0: vec![1.0, f64::NAN], ..ok };
        assert!(bad.check(false).unwrap_err().starts_with("w0:"));
    }
}
