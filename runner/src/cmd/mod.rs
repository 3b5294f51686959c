pub mod model;
pub mod micro;
