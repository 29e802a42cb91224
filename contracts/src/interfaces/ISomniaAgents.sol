// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title ISomniaAgents
/// @notice The part of Somnia's agent platform a verdict source uses, written from the platform's
/// documented interface (docs.somnia.network, agents pages). The platform's own source is not
/// public; types and signatures here are the documented ones, field for field, because the
/// callback's selector is computed from them.
/// @dev The platform is an upgradeable proxy: whoever holds its upgrade key can change what it
/// does, so it is in the trust path of every answer it delivers.
interface ISomniaAgents {
    /// @notice Majority finalizes when `threshold` results are byte-identical; Threshold when
    /// `threshold` responses succeeded, whether or not they agree.
    enum ConsensusType {
        Majority,
        Threshold
    }

    enum ResponseStatus {
        None,
        Pending,
        Success,
        Failed,
        TimedOut
    }

    /// @notice One validator's answer. `result` is the agent's return value, ABI-encoded (a
    /// string for LLM inference).
    struct Response {
        address validator;
        bytes result;
        ResponseStatus status;
        uint256 receipt;
        uint256 timestamp;
        uint256 executionCost;
    }

    struct Request {
        uint256 id;
        address requester;
        address callbackAddress;
        bytes4 callbackSelector;
        address[] subcommittee;
        Response[] responses;
        uint256 responseCount;
        uint256 failureCount;
        uint256 threshold;
        uint256 createdAt;
        uint256 deadline;
        ResponseStatus status;
        ConsensusType consensusType;
        uint256 remainingBudget;
        uint256 perAgentBudget;
    }

    /// @notice Asks `subcommitteeSize` validators to run agent `agentId` on `payload` (the ABI
    /// call of the agent's method). `msg.value` must cover the deposit floor plus the agent's
    /// price per validator; an underpaid request is skipped and times out. What is not spent
    /// is rebated to the requester, which must accept plain transfers.
    function createAdvancedRequest(
        uint256 agentId,
        address callbackAddress,
        bytes4 callbackSelector,
        bytes calldata payload,
        uint256 subcommitteeSize,
        uint256 threshold,
        ConsensusType consensusType,
        uint256 timeout
    ) external payable returns (uint256 requestId);

    /// @notice The deposit floor of a request to `subcommitteeSize` validators.
    function getAdvancedRequestDeposit(uint256 subcommitteeSize) external view returns (uint256);
}

/// @title ISomniaAgentConsumer
/// @notice The callback the platform sends when a request finalizes (succeeded, failed or timed
/// out); `responses` are all the validators' responses, in the order they came.
interface ISomniaAgentConsumer {
    function handleResponse(
        uint256 requestId,
        ISomniaAgents.Response[] calldata responses,
        ISomniaAgents.ResponseStatus status,
        ISomniaAgents.Request calldata details
    ) external;
}

/// @title ISomniaLlmAgent
/// @notice The LLM inference agent's method, as a request's payload calls it: the prompt, the
/// system text, a flag the source always sets false, and the closed set of allowed answers.
interface ISomniaLlmAgent {
    function inferString(
        string calldata prompt,
        string calldata system,
        bool flag,
        string[] calldata allowed
    ) external returns (string memory);
}
