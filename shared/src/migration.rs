//! The platform's migration version (`data.version` of ConfigMap
//! `cozy-system/cozystack-version`), as the 1.6 platform chart reads it and
//! what its migrations then do: one reading for the rules and the CLI's
//! checklist.
//!
//! Source, at v1.6.2 (v1.5.4 reads it the same way):
//!
//! - `packages/core/platform/templates/migration-hook.yaml:19-25`: the hook
//!   reads `dig "data" "version" "0" $configMap | int` (a missing key is
//!   `"0"`; Sprig's `int`, [`sprig::int`]: a leading 0 is octal,
//!   text is 0) and renders the hook Job only when that number is below
//!   `migrations.targetVersion`; it passes the number to the Job as
//!   `CURRENT_VERSION` (line 52);
//! - `packages/core/platform/values.yaml:17`: `targetVersion: 54` (v1.5.4's
//!   is 46, the same line);
//! - `packages/core/platform/images/migrations/run-migrations.sh:39-43`:
//!   `for i in $(seq $CURRENT_VERSION $((TARGET_VERSION - 1)))`, and a
//!   missing `/migrations/$i` exits 1; the image holds migrations 1 to 53
//!   (`images/migrations/migrations/`), so a version below 1 halts the
//!   upgrade.

/// The migration version v1.5.4 stamps (its `values.yaml:17`).
pub const V1_5_4_TARGET: u32 = 46;

/// The migration version v1.6.x stamps (`values.yaml:17` at v1.6.0, v1.6.1
/// and v1.6.2): the newest any release stamps.
pub const V1_6_TARGET: u32 = 54;

/// The first migration the images hold (`migrations/1`).
const FIRST_MIGRATION: i64 = 1;

/// `data.version` as the migration hook reads it: `dig`'s `"0"` for a
/// missing key, then Sprig's `int`.
pub fn hook_reads(version: Option<&str>) -> i64 {
    sprig::int(version.unwrap_or("0"))
}

/// What the 1.6 platform chart's upgrade does from migration version
/// `current` (as [`hook_reads`] reads it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upgrade {
    /// Runs migrations `current` to 53, then stamps 54.
    Runs,
    /// `run-migrations.sh` finds no migration `current` and exits 1: the
    /// upgrade halts.
    Halts,
    /// At or past 54: the hook Job is not rendered, no migration runs.
    Skips,
}

impl Upgrade {
    /// What the upgrade to 1.6 does from `current`.
    pub fn from(current: i64) -> Self {
        if current >= i64::from(V1_6_TARGET) {
            Upgrade::Skips
        } else if current < FIRST_MIGRATION {
            Upgrade::Halts
        } else {
            Upgrade::Runs
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hook_reads_with_dig_and_int() {
        assert_eq!(hook_reads(None), 0);
        assert_eq!(hook_reads(Some("46")), 46);
        assert_eq!(hook_reads(Some("046")), 38);
        assert_eq!(hook_reads(Some("v46")), 0);
        assert_eq!(Upgrade::from(0), Upgrade::Halts);
        assert_eq!(Upgrade::from(-1), Upgrade::Halts);
        assert_eq!(Upgrade::from(1), Upgrade::Runs);
        assert_eq!(Upgrade::from(53), Upgrade::Runs);
        assert_eq!(Upgrade::from(54), Upgrade::Skips);
        assert_eq!(Upgrade::from(100), Upgrade::Skips);
    }
}
