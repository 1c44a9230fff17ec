// Stops the detached services of the dev, test and cluster stacks, or only those of the
// profiles named (`npm run stack:stop -- cluster`).
import { stopCluster } from './cluster';
import { StackProfile, stopStack } from './stack';

async function main() {
  const named = process.argv.slice(2) as StackProfile[];
  const profiles: StackProfile[] = named.length ? named : ['test', 'dev', 'cluster'];
  for (const profile of profiles) {
    if (profile === 'cluster') await stopCluster();
    else if (profile === 'test' || profile === 'dev') stopStack(profile);
    else throw new Error(`unknown profile ${profile} (dev, test, cluster)`);
  }
  console.log('stopped');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
