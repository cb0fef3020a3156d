/** The AMI alias used when a node class names none. Production should pin a version (synth warns). */
export const DEFAULT_AMI_ALIAS = 'al2023@latest';
