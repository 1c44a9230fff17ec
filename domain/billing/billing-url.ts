/** Where a member adds credits: the console's billing page, from the deployment's site URL. */
export function billingUrlOf(siteUrl: string): string {
  return `${siteUrl}/billing#credits`;
}
