pub mod micro;
pub mod model;
