//! Deterministic look-alike hashes (Git SHAs, OCI digests, pod name suffixes) from seed strings,
//! so the demo fleet is identical on every run without a random number generator.

/// FNV-1a, 64 bit: tiny, fast and good enough to make different seeds look different.
fn fnv1a(seed: &str, round: u64) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in seed.bytes().chain(round.to_le_bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// A number in `0..1` derived from `seed`: the demo's dice.
pub fn unit(seed: &str) -> f64 {
    (fnv1a(seed, 0) >> 11) as f64 / (1u64 << 53) as f64
}

/// `len` lowercase hex digits derived from `seed`.
pub fn hex(seed: &str, len: usize) -> String {
    let mut out = String::with_capacity(len + 16);
    let mut round = 0;
    while out.len() < len {
        out.push_str(&format!("{:016x}", fnv1a(seed, round)));
        round += 1;
    }
    out.truncate(len);
    out
}

/// `len` characters from the alphabet Kubernetes uses for generated names (no vowels, no 0/1/3).
pub fn name_suffix(seed: &str, len: usize) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut value = fnv1a(seed, 0);
    (0..len)
        .map(|_| {
            let c = ALPHABET[(value % ALPHABET.len() as u64) as usize];
            value /= ALPHABET.len() as u64;
            char::from(c)
        })
        .collect()
}

/// A Git artifact revision as source-controller writes it: `main@sha1:<40 hex>`.
pub fn git_revision(seed: &str) -> String {
    format!("main@sha1:{}", hex(seed, 40))
}

/// An artifact digest: `sha256:<64 hex>`.
pub fn digest(seed: &str) -> String {
    format!("sha256:{}", hex(seed, 64))
}

/// An OCI artifact revision: `<tag>@sha256:<64 hex>`, the digest fixed by the tag and seed.
pub fn oci_revision(tag: &str, seed: &str) -> String {
    format!("{tag}@{}", digest(&format!("{seed}:{tag}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_are_right_and_stable() {
        let git = git_revision("a");
        assert_eq!(git.len(), "main@sha1:".len() + 40);
        assert_eq!(git, git_revision("a"));
        assert_ne!(git, git_revision("b"));
        assert!(oci_revision("v1.4.2", "x").starts_with("v1.4.2@sha256:"));
        assert_eq!(digest("x").len(), 7 + 64);
        assert_eq!(name_suffix("pod", 5).len(), 5);
        assert!(hex("x", 70).chars().all(|c| c.is_ascii_hexdigit()));
    }
}
