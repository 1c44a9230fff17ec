// Signals, updates and queries of this area, shared by workflows and the API.
export {};
