mod bad_input;
mod concurrency;
mod escapes;
mod lifecycle;
mod planted;
