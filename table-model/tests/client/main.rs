//! The client's tests against in-memory and loopback services, one binary (each module was a binary of its own,
//! and each linked the client stack): bulk writes, Cosmos DB's differences, Microsoft Entra ID over HTTPS, errors
//! and retries, paging.

mod bulk;
mod cosmos;
mod entra;
mod errors;
mod paging;
