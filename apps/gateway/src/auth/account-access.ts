// One rule for the gateway and the workers (which serve a repository model to the accounts that may use it).
export { accountMayUse } from '@nvcf/queue';
