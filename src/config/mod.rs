//! Configuration: embedded defaults < `refine-loop.toml` < `REFINE_LOOP_*` environment < flags,
//! resolved once into [`Settings`]. Everything is validated (and every parser compiled) before
//! anything runs.

mod checks;
mod error;
mod fix_mode;
mod from_ref;
mod integrity;
mod load;
mod loop_guards;
mod loop_settings;
mod overrides;
#[cfg(test)]
mod schema;
mod settings;
pub mod units;
mod wire;

pub use error::{ConfigError, one_line};
pub use fix_mode::fix_command;
pub use load::{from_environment, load};
pub use overrides::Overrides;
pub use settings::{
    Accept, CheckSettings, GateSettings, Isolate, LENSES, RunSettings, Settings, Shard, Verify,
    defaults,
};
