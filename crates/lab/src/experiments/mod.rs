//! Experiments that check the lab against published analytic results.

pub mod ideal;
