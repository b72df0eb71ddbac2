//! Random streams. Every random component owns its own generator derived from the scenario seed
//! and a stable name ("flow:3", "link:bottleneck:loss"), so adding a flow or a link never shifts
//! the draws of the others, and a run is a pure function of (scenario, seed).

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The generator every component uses (xoshiro256++: fast, 256-bit state, fixed output on every
/// platform).
pub type SimRng = Xoshiro256PlusPlus;

/// The stream named `name` of the run seeded with `seed`: the seed and the name's FNV-1a hash
/// are mixed by SplitMix64 into the generator's seed.
pub fn stream(seed: u64, name: &str) -> SimRng {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in name.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    SimRng::seed_from_u64(splitmix64(seed ^ splitmix64(hash)))
}

fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A uniform draw in [0, 1) with 53 bits of precision.
pub fn uniform(rng: &mut SimRng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// An exponential draw with the given mean.
pub fn exponential(rng: &mut SimRng, mean: f64) -> f64 {
    -mean * (1.0 - uniform(rng)).ln()
}

/// A Pareto draw with minimum `scale` and tail index `shape`: scale·U^(-1/shape), ns-2's
/// `RNG::pareto` (protocols.md §6.1); its mean is scale·shape/(shape-1) when shape > 1. The
/// uniform is taken in (0, 1] so the draw is always finite.
pub fn pareto(rng: &mut SimRng, scale: f64, shape: f64) -> f64 {
    scale * (1.0 - uniform(rng)).powf(-1.0 / shape)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_stable_and_distinct() {
        let a1 = stream(1, "flow:0").next_u64();
        let a2 = stream(1, "flow:0").next_u64();
        let b = stream(1, "flow:1").next_u64();
        let c = stream(2, "flow:0").next_u64();
        assert_eq!(a1, a2);
        assert_ne!(a1, b);
        assert_ne!(a1, c);
    }

    #[test]
    fn uniform_and_exponential_moments() {
        let mut rng = stream(7, "test");
        let n = 100_000;
        let mean_u: f64 = (0..n).map(|_| uniform(&mut rng)).sum::<f64>() / n as f64;
        assert!((mean_u - 0.5).abs() < 0.01);
        let mean_e: f64 = (0..n).map(|_| exponential(&mut rng, 2.0)).sum::<f64>() / n as f64;
        assert!((mean_e - 2.0).abs() < 0.05);
    }

    #[test]
    fn pareto_minimum_and_mean() {
        let mut rng = stream(9, "test");
        let n = 200_000;
        let draws: Vec<f64> = (0..n).map(|_| pareto(&mut rng, 1.0, 3.0)).collect();
        assert!(draws.iter().all(|&x| x >= 1.0 && x.is_finite()));
        let mean = draws.iter().sum::<f64>() / n as f64;
        assert!((mean - 1.5).abs() < 0.02, "{mean}");
    }
}
