// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {ISomniaAgents} from "../interfaces/ISomniaAgents.sol";

/// @title SomniaAgentsStandIn
/// @notice A STAND-IN for Somnia's agent platform, for tests and the local demo only: Somnia's
/// platform cannot run here (its source is not public and there is no official mock). Written
/// from the platform's documented interface (`ISomniaAgents`) and nothing else. Its validators
/// are fixed keys; each reads a request's payload from `RequestCreated`, runs the model itself
/// (the demo's validators ask the bundled model) and sends its result with `respond`, or
/// `reportFailure`. A request finalizes as documented: Majority when `threshold` results are
/// byte-identical, Threshold when `threshold` responses succeeded; Failed once success is out of
/// reach; TimedOut when anyone calls `expire` after its deadline. The callback then gets every
/// response, and the unspent part of the payment is rebated to the requester.
/// @dev What it does NOT model: paying validators (what is spent stays here), receipts (0),
/// execution costs beyond the fixed price, validator selection (the first `subcommitteeSize`
/// validators, in order), the callback's gas limit (all gas is forwarded), and the real
/// platform's upgradeable proxy, whose upgrade key is in the trust path on Somnia.
contract SomniaAgentsStandIn is ISomniaAgents {
    /// @notice The platform's per-validator floor and the LLM agent's price per validator.
    uint256 public immutable depositPerAgent;
    uint256 public immutable pricePerAgent;

    address[] internal _validators;
    Request[] internal _requests;
    /// @dev Whether a request was paid less than it needs: validators skip it and it times out.
    mapping(uint256 requestId => bool) public underpaid;
    mapping(uint256 requestId => uint256) public paid;
    /// @dev The payload's hash: validators read the payload itself from `RequestCreated`.
    mapping(uint256 requestId => bytes32) public payloadHash;
    mapping(uint256 requestId => mapping(address validator => bool)) public answered;

    error NoValidators();
    error SubcommitteeTooLarge(uint256 size, uint256 validators);
    error BadThreshold(uint256 threshold, uint256 size);
    error UnknownRequest(uint256 requestId);
    error NotPending(uint256 requestId, ResponseStatus status);
    error NotInSubcommittee(uint256 requestId, address who);
    error AlreadyAnswered(uint256 requestId, address who);
    error Underpaid(uint256 requestId);
    error NotExpired(uint256 requestId, uint256 deadline, uint256 nowSec);

    event RequestCreated(
        uint256 indexed requestId, uint256 indexed agentId, bytes payload, address[] subcommittee
    );
    event RequestFinalized(uint256 indexed requestId, ResponseStatus status, bool callbackOk);
    event Rebated(uint256 indexed requestId, address indexed requester, uint256 amount, bool ok);

    constructor(address[] memory validators_, uint256 depositPerAgent_, uint256 pricePerAgent_) {
        if (validators_.length == 0) revert NoValidators();
        _validators = validators_;
        depositPerAgent = depositPerAgent_;
        pricePerAgent = pricePerAgent_;
    }

    /// @inheritdoc ISomniaAgents
    function getAdvancedRequestDeposit(uint256 subcommitteeSize) public view returns (uint256) {
        return depositPerAgent * subcommitteeSize;
    }

    /// @inheritdoc ISomniaAgents
    function createAdvancedRequest(
        uint256 agentId,
        address callbackAddress,
        bytes4 callbackSelector,
        bytes calldata payload,
        uint256 subcommitteeSize,
        uint256 threshold_,
        ConsensusType consensusType,
        uint256 timeout
    ) external payable returns (uint256 requestId) {
        if (subcommitteeSize > _validators.length) {
            revert SubcommitteeTooLarge(subcommitteeSize, _validators.length);
        }
        if (threshold_ == 0 || threshold_ > subcommitteeSize) {
            revert BadThreshold(threshold_, subcommitteeSize);
        }
        requestId = _requests.length;
        Request storage r = _requests.push();
        r.id = requestId;
        r.requester = msg.sender;
        r.callbackAddress = callbackAddress;
        r.callbackSelector = callbackSelector;
        for (uint256 i; i < subcommitteeSize; ++i) {
            r.subcommittee.push(_validators[i]);
        }
        r.threshold = threshold_;
        r.createdAt = block.timestamp;
        r.deadline = block.timestamp + timeout;
        r.status = ResponseStatus.Pending;
        r.consensusType = consensusType;
        r.perAgentBudget = pricePerAgent;
        r.remainingBudget = msg.value;
        paid[requestId] = msg.value;
        payloadHash[requestId] = keccak256(payload);
        uint256 needed =
            getAdvancedRequestDeposit(subcommitteeSize) + pricePerAgent * subcommitteeSize;
        underpaid[requestId] = msg.value < needed;
        emit RequestCreated(requestId, agentId, payload, r.subcommittee);
    }

    /// @notice A subcommittee validator's successful result (the agent's ABI-encoded return).
    function respond(uint256 requestId, bytes calldata result) external {
        Request storage r = _member(requestId);
        r.responses
            .push(
                Response({
                    validator: msg.sender,
                    result: result,
                    status: ResponseStatus.Success,
                    receipt: 0,
                    timestamp: block.timestamp,
                    executionCost: pricePerAgent
                })
            );
        r.responseCount += 1;
        r.remainingBudget -= pricePerAgent;
        if (_reached(r)) _finalize(r, ResponseStatus.Success);
    }

    /// @notice A subcommittee validator could not run the agent.
    function reportFailure(uint256 requestId) external {
        Request storage r = _member(requestId);
        r.responses
            .push(
                Response({
                    validator: msg.sender,
                    result: "",
                    status: ResponseStatus.Failed,
                    receipt: 0,
                    timestamp: block.timestamp,
                    executionCost: 0
                })
            );
        r.failureCount += 1;
        // Success is out of reach once fewer validators are left than still needed.
        if (r.subcommittee.length - r.failureCount < r.threshold) {
            _finalize(r, ResponseStatus.Failed);
        }
    }

    /// @notice Anyone may time out a pending request after its deadline.
    function expire(uint256 requestId) external {
        Request storage r = _pending(requestId);
        // The stand-in's timeout is wall-clock, as the platform's is; tests set the clock.
        // slither-disable-start timestamp
        // forge-lint: disable-next-line(block-timestamp)
        if (block.timestamp <= r.deadline) {
            revert NotExpired(requestId, r.deadline, block.timestamp);
        }
        // slither-disable-end timestamp
        _finalize(r, ResponseStatus.TimedOut);
    }

    function getRequest(uint256 requestId) external view returns (Request memory) {
        if (requestId >= _requests.length) revert UnknownRequest(requestId);
        return _requests[requestId];
    }

    function validators() external view returns (address[] memory) {
        return _validators;
    }

    function requestCount() external view returns (uint256) {
        return _requests.length;
    }

    // --- internal

    function _pending(uint256 requestId) internal view returns (Request storage r) {
        if (requestId >= _requests.length) revert UnknownRequest(requestId);
        r = _requests[requestId];
        if (r.status != ResponseStatus.Pending) revert NotPending(requestId, r.status);
    }

    function _member(uint256 requestId) internal returns (Request storage r) {
        r = _pending(requestId);
        if (underpaid[requestId]) revert Underpaid(requestId);
        bool member = false;
        for (uint256 i; i < r.subcommittee.length; ++i) {
            if (r.subcommittee[i] == msg.sender) member = true;
        }
        if (!member) revert NotInSubcommittee(requestId, msg.sender);
        if (answered[requestId][msg.sender]) revert AlreadyAnswered(requestId, msg.sender);
        answered[requestId][msg.sender] = true;
    }

    /// @dev Whether the request can finalize as a success under its consensus type.
    function _reached(Request storage r) internal view returns (bool) {
        if (r.consensusType == ConsensusType.Threshold) return r.responseCount >= r.threshold;
        Response[] storage rs = r.responses;
        bytes32 last = keccak256(rs[rs.length - 1].result);
        uint256 same = 0;
        for (uint256 i; i < rs.length; ++i) {
            if (rs[i].status == ResponseStatus.Success && keccak256(rs[i].result) == last) ++same;
        }
        return same >= r.threshold;
    }

    /// @dev Sends the callback (a consumer that reverts does not undo the finalization), then
    /// the rebate. Each event reports its call's outcome, so it follows the call; the status is
    /// written before either.
    // slither-disable-start reentrancy-events
    function _finalize(Request storage r, ResponseStatus status) internal {
        r.status = status;
        uint256 id = r.id;
        Request memory details = r;
        (bool ok,) = r.callbackAddress
            .call(
                abi.encodeWithSelector(r.callbackSelector, id, details.responses, status, details)
            );
        emit RequestFinalized(id, status, ok);
        uint256 rebate = r.remainingBudget;
        r.remainingBudget = 0;
        if (rebate != 0) {
            (bool sent,) = payable(r.requester).call{value: rebate}("");
            emit Rebated(id, r.requester, rebate, sent);
        }
    }
    // slither-disable-end reentrancy-events
}
