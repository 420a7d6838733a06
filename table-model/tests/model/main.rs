//! The model's and the wire format's tests, one binary (each module was a binary of its own): names, keys and
//! key helpers, EDM values, the JSON wire format (golden bodies, property tests, ASCII bodies), and the derive's
//! property tests.

mod ascii_bodies;
#[cfg(feature = "derive")]
mod derive_proptest;
mod edm;
mod json;
mod json_proptest;
mod key;
mod key_validation;
mod name;
