// Workflows of this area (see DESIGN.md): deterministic code only.
export {};
