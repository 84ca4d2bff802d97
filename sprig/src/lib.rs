//! Helm's template arithmetic as Cozystack's charts compute it, for the
//! policies that predict what a chart renders or refuses (chart-render)
//! and what it writes (upgrade-gate's tenant quotas). It runs inside the
//! policies' modules (guest side), with nothing beyond what they carry.
//!
//! - [`decimal`]: Sprig's `mulf`, `addf` and `divf`, which compute in
//!   shopspring/decimal, and that [`Decimal`] for exact arithmetic on
//!   what a template computes;
//! - [`float`]: Go's float64 as the templates read it (`float64`,
//!   spf13/cast) and print it (`toString`, `%v`), and its conversion to
//!   int;
//! - [`text`]: Sprig's `kebabcase`, and `toString` of a value;
//! - [`int`]: Sprig's `int` of a string (spf13/cast, Go's `ParseInt`);
//! - [`cozy_lib`]: the library chart's `toFloat` of a quantity.
//!
//! Each is held to Helm itself: `tests/helm.rs` runs the same inputs
//! through Helm's go-template runner (Helm v4.2.3's SDK, `tools/helm-venv`)
//! and compares every answer.

pub mod cozy_lib;
pub mod decimal;
pub mod float;
pub mod int;
pub mod text;

pub use decimal::{Decimal, addf, divf, mulf};
pub use float::{cast_float, float_of_int, format_int, format_v, to_int};
pub use int::{int, parse};
pub use text::{kebabcase, to_string};
