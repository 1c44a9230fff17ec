// Stops the detached services of the dev and test stacks.
import { stopStack } from './stack';

stopStack('test');
stopStack('dev');
console.log('stopped');
