mod bad_input;
mod concurrency;
mod escapes;
mod import;
mod lifecycle;
mod planted;
mod policy;
