/**
 * zod yields Karpenter's enumerations as string literals (what the YAML holds); the types
 * imported from the CRDs declare TypeScript string enums of the same values. `${E}` is
 * exactly the union of E's values, so this conversion is checked, not a blind cast.
 */
export function asEnum<E extends string>(value: `${E}`): E;
export function asEnum<E extends string>(value: `${E}` | undefined): E | undefined;
export function asEnum<E extends string>(value: `${E}` | undefined): E | undefined {
  return value as E | undefined;
}
