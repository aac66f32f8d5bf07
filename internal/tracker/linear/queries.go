package linear

// The GraphQL documents drover sends, checked against Linear's published
// schema (linear/linear, packages/sdk/src/schema.graphql) by
// TestQueriesMatchLinearSchema when DROVER_LINEAR_SCHEMA names that file.
const (
	issueFields = `id identifier title description priority url updatedAt
      state { id name type }
      team { id }
      labels(first: 50) { nodes { name } }
      inverseRelations(first: 50) { nodes { type issue { id } } }`

	qProject = `query DroverProject($slug: String!) {
  projects(filter: {slugId: {eq: $slug}}, first: 1) {
    nodes { id name teams(first: 20) { nodes { id key states(first: 100) { nodes { id name type } } } } }
  }
}`

	qCandidates = `query DroverCandidates($slug: String!, $states: [String!]!, $first: Int!, $after: String) {
  issues(filter: {project: {slugId: {eq: $slug}}, state: {name: {in: $states}}}, first: $first, after: $after) {
    nodes { ` + issueFields + ` }
    pageInfo { hasNextPage endCursor }
  }
}`

	qByIDs = `query DroverIssuesByID($ids: [ID!]!, $first: Int!) {
  issues(filter: {id: {in: $ids}}, first: $first) {
    nodes { ` + issueFields + ` }
  }
}`

	qComments = `query DroverComments($id: String!, $since: DateTimeOrDuration!) {
  issue(id: $id) {
    comments(filter: {createdAt: {gt: $since}}, first: 100) { nodes { id body createdAt user { name } } }
  }
}`

	mMove = `mutation DroverMove($id: String!, $stateId: String!) {
  issueUpdate(id: $id, input: {stateId: $stateId}) { success }
}`

	mComment = `mutation DroverComment($issueId: String!, $body: String!) {
  commentCreate(input: {issueId: $issueId, body: $body}) { success }
}`
)
